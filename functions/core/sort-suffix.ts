let sequence = 0;

/**
 * A sort-key part that orders items written in the same millisecond by this process in the order
 * they were made (timelines, run histories, ledger entries, log lines). Timestamps from different
 * processes differ in practice; ties there are broken by the id that follows.
 */
export function sortSuffix(): string {
  sequence = (sequence + 1) % 1e9;
  return String(sequence).padStart(9, '0');
}
