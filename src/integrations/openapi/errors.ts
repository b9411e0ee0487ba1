/** An OpenAPI spec could not be read, parsed, validated, or gave no base URL. Secrets never appear in the message. */
export class OpenApiError extends Error {
  override readonly name = 'OpenApiError';
  constructor(
    /** The file path, URL (redacted) or "inline spec" the error is about. */
    readonly source: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
