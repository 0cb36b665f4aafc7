import type { ComponentChildren } from 'preact';
import { useRef, useState } from 'preact/hooks';
import { ApiError } from '../api-error.tsx';

/**
 * A button for a destructive action (delete, revoke, restart): it opens a modal dialog saying
 * what will happen, and acts only on "Confirm". A native <dialog> shown with showModal() keeps the
 * keyboard inside it and closes on Escape. If the action fails, its error stays in the dialog.
 */
export function ConfirmButton({
  label,
  title,
  confirmLabel = label,
  children,
  onConfirm,
  disabled,
}: {
  label: string;
  title: string;
  confirmLabel?: string;
  children?: ComponentChildren;
  onConfirm: () => Promise<unknown>;
  disabled?: boolean;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const close = () => dialog.current?.close();
  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
      close();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button
        type="button"
        class="danger"
        disabled={disabled}
        onClick={() => {
          setError(null);
          dialog.current?.showModal();
        }}
      >
        {label}
      </button>
      <dialog ref={dialog} class="confirm" aria-labelledby={`${title}-title`.replace(/\W+/g, '-')}>
        <h2 id={`${title}-title`.replace(/\W+/g, '-')}>{title}</h2>
        {children}
        {error !== null && <ApiError error={error} />}
        <div class="actions">
          <button type="button" class="secondary" onClick={close} disabled={busy}>
            Cancel
          </button>
          <button type="button" class="danger" onClick={confirm} disabled={busy}>
            {busy ? 'Working…' : confirmLabel}
          </button>
        </div>
      </dialog>
    </>
  );
}
