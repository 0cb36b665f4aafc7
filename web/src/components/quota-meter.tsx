interface Quota {
  tier: string;
  limit: number;
  used: number;
  remaining: number;
  reset_at: string;
}

/** Today's use of one daily quota, as a native meter (read out by screen readers) and in words. */
export function QuotaMeter({ label, quota, id }: { label: string; quota: Quota; id: string }) {
  const share = quota.limit > 0 ? quota.used / quota.limit : 0;
  return (
    <div class="card quota" data-testid={id}>
      <h3 id={`${id}-label`}>{label}</h3>
      <p class="big-number">
        {quota.used.toLocaleString()} <span class="muted">of {quota.limit.toLocaleString()}</span>
      </p>
      <meter
        aria-labelledby={`${id}-label`}
        min={0}
        max={Math.max(quota.limit, 1)}
        value={quota.used}
        low={quota.limit * 0.7}
        high={quota.limit * 0.9}
        optimum={0}
      />
      <p class="muted">
        {quota.remaining.toLocaleString()} left ({Math.round(share * 100)}% used, {quota.tier} tier); resets{' '}
        <time dateTime={quota.reset_at}>{new Date(quota.reset_at).toLocaleString()}</time>
      </p>
    </div>
  );
}
