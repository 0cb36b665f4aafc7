import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render } from 'preact';
import { App } from './app.tsx';
import './styles.css';

// No retries, here or in the SDK's client (api-client.ts): an error is shown as soon as it comes.
const queryClient = new QueryClient({
  defaultOptions: { queries: { retry: false, refetchOnWindowFocus: true, staleTime: 15_000 } },
});

const root = document.getElementById('app');
if (root) {
  render(
    <QueryClientProvider client={queryClient}>
      <App />
    </QueryClientProvider>,
    root,
  );
}
