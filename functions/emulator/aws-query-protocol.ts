/*
 * The AWS Query protocol as Elastic Load Balancing v2 speaks it: the request is a form
 * (`Action=CreateRule&Version=2015-12-01&Conditions.member.1.Field=host-header…`), the answer XML
 * (`<CreateRuleResponse><CreateRuleResult>…</CreateRuleResult><ResponseMetadata>…`), lists as
 * `<member>` elements, errors as `<ErrorResponse><Error><Type/><Code/><Message/></Error>`.
 */

type Tree = { [key: string]: Tree | string };

/** The form's parameters as nested objects, `member.N` lists as arrays (in index order). */
export function parseQueryParams(form: URLSearchParams): Record<string, unknown> {
  const root: Tree = {};
  for (const [key, value] of form) {
    if (key === 'Action' || key === 'Version') continue;
    const parts = key.split('.');
    let node: Tree = root;
    for (const [i, part] of parts.entries()) {
      if (i === parts.length - 1) node[part] = value;
      else {
        const next = node[part];
        if (typeof next === 'object') node = next;
        else node = node[part] = {};
      }
    }
  }
  const lists = (v: Tree | string): unknown => {
    if (typeof v === 'string') return v;
    const keys = Object.keys(v);
    if (keys.length === 1 && keys[0] === 'member') {
      const members = v.member as Tree;
      return Object.keys(members)
        .map(Number)
        .sort((a, b) => a - b)
        .map((n) => lists(members[String(n)] as Tree | string));
    }
    return Object.fromEntries(keys.map((k) => [k, lists(v[k] as Tree | string)]));
  };
  return lists(root) as Record<string, unknown>;
}

const escapeXml = (s: string) =>
  s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');

/** A value as XML elements: objects as their fields, arrays as `<member>` elements. */
export function toXml(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (Array.isArray(value)) return value.map((v) => `<member>${toXml(v)}</member>`).join('');
  if (typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined && v !== null)
      .map(([k, v]) => `<${k}>${toXml(v)}</${k}>`)
      .join('');
  }
  return escapeXml(String(value));
}

export function queryResponse(action: string, namespace: string, result: unknown, requestId: string): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<${action}Response xmlns="${namespace}">` +
    `<${action}Result>${toXml(result)}</${action}Result>` +
    `<ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></${action}Response>`
  );
}

export function queryError(namespace: string, code: string, message: string, requestId: string): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<ErrorResponse xmlns="${namespace}">` +
    `<Error><Type>Sender</Type><Code>${escapeXml(code)}</Code><Message>${escapeXml(message)}</Message></Error>` +
    `<RequestId>${requestId}</RequestId></ErrorResponse>`
  );
}
