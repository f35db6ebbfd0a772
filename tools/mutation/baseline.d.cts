/** Types for tools/mutation/baseline.cjs, for the tests that pin the baseline's canonical form. */
export function canonicalize(report: unknown): string;
export function compress(text: string): Buffer;
export function decompress(bytes: Buffer): string;
export function restore(archive?: string, plain?: string): boolean;
export function store(plain?: string, archive?: string): 'written' | 'unchanged' | 'absent';
export const plainPath: string;
export const archivePath: string;
export const archiveName: string;
