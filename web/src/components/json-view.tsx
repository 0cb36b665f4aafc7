/** A JSON value, indented, in a scrollable block (schemas, manifests, envelopes, inputs). */
export function JsonView({ value, testId }: { value: unknown; testId?: string }) {
  return (
    <pre class="json" data-testid={testId}>
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}
