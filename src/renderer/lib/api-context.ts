import { getContext, setContext } from 'svelte';
import type { Api } from './transport.js';

/** The context key of the contract: set once by the app, read by every component that calls the core. */
const API_KEY = Symbol('servebench-api');

/** Makes `api` the contract of every component below the caller (App, at its start). */
export function provideApi(api: Api): void {
  setContext(API_KEY, api);
}

/** The contract the app provided; a component mounted outside the app has none, and says so at once. */
export function useApi(): Api {
  const api = getContext<Api | undefined>(API_KEY);
  if (!api) throw new Error('no servebench api in context: mount the component under App');
  return api;
}
