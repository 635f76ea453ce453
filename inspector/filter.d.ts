// Types of filter.js for the TypeScript tests (the page loads the .js as it is).
export interface FilterableFrame {
  dialect: string;
  direction: "client" | "server";
  session?: string;
  method?: string;
  connection: string;
  id?: string | number;
  kind: string;
  verdict: { status: string };
  message?: string;
  raw?: string;
}
export interface FilterTerm {
  key: string;
  value: string;
  negated: boolean;
  test(frame: FilterableFrame): boolean;
}
export interface Filter {
  terms: FilterTerm[];
  errors: string[];
}
export function parseFilter(text: string): Filter;
export function matchesFilter(filter: Filter, frame: FilterableFrame): boolean;
export function wildcard(pattern: string): (text: string) => boolean;
