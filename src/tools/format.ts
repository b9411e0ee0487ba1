/** A byte count the way people read it: `512 B`, `1.5 KB`, `20 MB` (binary units). */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${+(n / 1024).toFixed(1)} KB`;
  return `${+(n / (1024 * 1024)).toFixed(1)} MB`;
}
