import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render } from 'preact';
import { App } from './app.tsx';
import './styles.css';

// The SDK already retries what the API calls retryable (with its wait); a second layer of retries
// here would only delay showing an error.
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
