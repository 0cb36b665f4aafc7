import { useState } from 'preact/hooks';

/**
 * Copies a value shown once (a new API key, a webhook URL) to the clipboard, and says so in a live
 * region for screen readers. Where the browser refuses the clipboard, the value stays selectable.
 */
export function CopyButton({ value, label = 'Copy' }: { value: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setState('copied');
    } catch {
      setState('failed');
    }
  };
  return (
    <span class="copy">
      <button type="button" class="secondary" onClick={copy}>
        {label}
      </button>
      <span aria-live="polite" class="muted">
        {state === 'copied'
          ? ' Copied.'
          : state === 'failed'
            ? ' The browser refused; select and copy it.'
            : ''}
      </span>
    </span>
  );
}
