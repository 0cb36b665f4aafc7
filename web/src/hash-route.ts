import { useEffect, useState } from 'preact/hooks';

/**
 * The page named by the URL's fragment (`#/overview`). Hash routing because the platform's API owns
 * the paths: `/{org}/{agent}/{version}/{endpoint}` and friends would collide with page paths, and
 * the fragment never reaches the server.
 */
export function useHashRoute(): string {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const onChange = () => setRoute(currentRoute());
    window.addEventListener('hashchange', onChange);
    // Effects run after the first paint: a hash changed between the first render and now fired
    // its hashchange before anyone listened, so read it once more.
    onChange();
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

function currentRoute(): string {
  const path = window.location.hash.replace(/^#/, '');
  return path === '' || path === '/' ? '/overview' : path;
}
