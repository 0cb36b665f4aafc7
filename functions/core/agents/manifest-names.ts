/*
 * The shapes of names a manifest uses: agent names, dependency ids, skill refs, version pins, tool
 * names, endpoints and regions.
 */

/** Agent (and skill) names: the {agent} segment of /{org}/{agent}/{version}/{endpoint}. */
export const AGENT_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,63}$/;
const ORG = '[a-z0-9][a-z0-9-]{0,37}[a-z0-9]'; // org slugs: 2-39 characters (functions/core/accounts/slug.ts)
const NAME = '[a-z0-9][a-z0-9-]{0,63}';
export const DEPENDENCY_ID_PATTERN = new RegExp(`^${ORG}/${NAME}$`);
export const SKILL_REF_PATTERN = new RegExp(`^${ORG}/${NAME}(?:@v[1-9][0-9]*)?$`);
export const VERSION_PIN_PATTERN = /^v[1-9][0-9]*$/;
/** The providers' tool-name rule (Anthropic and OpenAI both allow exactly this). */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const ENDPOINT_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const REGION_PATTERN = /^[a-z0-9][a-z0-9-]{0,31}$/;
