import type { LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { wrapLanguageModel } from 'ai';
import type { RunSteps } from '../../ports/run-steps.ts';
import type { ModelV4 } from './provider-models.ts';

/*
 * A tool loop's model requests as a run's steps (ports/run-steps.ts): turn n is the step
 * `model-<n>`, and a replayed loop is answered each finished turn's recorded answer without a
 * request, through the AI SDK's own middleware. The SDK's loop is the same code on a replay, given
 * the same answers and the same tool results (managed-loop.ts records those): it asks for the same
 * tools in the same order, and its next request, the first not recorded, is the one the run was
 * making when its process went away.
 */

/** What a turn's answer keeps: what the loop reads of it, none of the request's or answer's bodies. */
type RecordedTurn = Omit<LanguageModelV4GenerateResult, 'request' | 'response' | 'content'> & {
  content: RecordedPart[];
  response?: { id?: string | undefined; modelId?: string | undefined; timestamp?: string | undefined };
};

/** `model`, each of its requests the run's next step. */
export function recordedTurns(model: ModelV4, steps: RunSteps | undefined): ModelV4 {
  if (!steps) return model;
  let turn = 0;
  return wrapLanguageModel({
    model,
    middleware: {
      specificationVersion: 'v4',
      wrapGenerate: async ({ doGenerate }) =>
        revived(await steps.step(`model-${turn++}`, async () => recorded(await doGenerate()))),
    },
  });
}

/** The answer as it survives JSON: file data as base64, the timestamp as ISO. */
function recorded(result: LanguageModelV4GenerateResult): RecordedTurn {
  const { request: _request, response, ...kept } = result;
  return {
    ...kept,
    content: kept.content.map(recordedPart),
    ...(response
      ? {
          response: {
            id: response.id,
            modelId: response.modelId,
            timestamp: response.timestamp?.toISOString(),
          },
        }
      : {}),
  };
}

type Part = LanguageModelV4GenerateResult['content'][number];
/** A part as JSON keeps it: a generated file's URL as its text. */
type RecordedPart =
  | Part
  | { type: 'file' | 'reasoning-file'; data: { type: 'url'; url: string }; [field: string]: unknown };

/** A generated file's bytes as base64 (a Uint8Array is not JSON), its URL as its text. */
function recordedPart(part: Part): RecordedPart {
  if (part.type !== 'file' && part.type !== 'reasoning-file') return part;
  const { data } = part;
  if (data.type === 'data' && data.data instanceof Uint8Array)
    return { ...part, data: { ...data, data: Buffer.from(data.data).toString('base64') } };
  if (data.type === 'url') return { ...part, data: { ...data, url: data.url.href } };
  return part;
}

function revivedPart(part: RecordedPart): Part {
  if ((part.type === 'file' || part.type === 'reasoning-file') && part.data.type === 'url')
    return { ...part, data: { ...part.data, url: new URL(String(part.data.url)) } } as Part;
  return part as Part;
}

function revived(turn: RecordedTurn): LanguageModelV4GenerateResult {
  const { response, ...kept } = turn;
  return {
    ...kept,
    content: kept.content.map(revivedPart),
    ...(response
      ? {
          response: {
            id: response.id,
            modelId: response.modelId,
            timestamp: response.timestamp === undefined ? undefined : new Date(response.timestamp),
          },
        }
      : {}),
  };
}
