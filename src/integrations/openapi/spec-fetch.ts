import type { LookupAddress, LookupOptions } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIPv4 } from 'node:net';
import { asyncScheduler, timer } from 'rxjs';
import { Agent, request } from 'undici';
import type { Dispatcher } from 'undici';
import { errorMessage } from '../../types/errors.js';
import { addressClass } from './address-ranges.js';
import type { OpenApiSettings } from './config.js';

/** Redirects followed per URL, each one checked like the first. */
const MAX_REDIRECTS = 5;
/** A spec or `$ref` document larger than this is refused: the parser would hold it whole. */
export const MAX_SPEC_BYTES = 64 * 1024 * 1024;
const REDIRECT = new Set([301, 302, 303, 307, 308]);
const RANGES = 'loopback, private-network, link-local, unique-local and shared (CGNAT) addresses';

/** A spec document could not be fetched, or was refused; the message names the URL (redacted). */
export class SpecFetchError extends Error {
  override readonly name = 'SpecFetchError';
  constructor(
    message: string,
    /** Why, without the URL: `refused: 10.0.0.1 is a private-network address; …`. */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

type PinnedLookup = (hostname: string, options: LookupOptions, callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void) => void;

/**
 * Fetches spec documents (the spec, its `$ref`s) for one load. Unless `allowPrivateRefs` is set,
 * every URL and every redirect hop is checked on the addresses its host resolves to, and the
 * connection is made to those checked addresses (the agent's lookup answers from them): a name
 * that resolves again to another address between the check and the connection changes nothing.
 */
export class SpecFetcher {
  private readonly checked = new Map<string, LookupAddress[]>();
  private agent: Agent | undefined;

  constructor(private readonly settings: OpenApiSettings) {}

  /** The document's text; `what` names it in errors (`the OpenAPI spec …`, `$ref "…"`). */
  async fetchText(url: URL, what: string): Promise<string> {
    const controller = new AbortController();
    const deadline = timer(this.settings.timeoutMs, this.settings.scheduler ?? asyncScheduler).subscribe(() => controller.abort());
    let current = url;
    try {
      for (let hop = 0; ; hop++) {
        const dispatcher = await this.dispatcherFor(current, what);
        const response = await request(current, {
          method: 'GET',
          headers: { accept: 'application/json, application/yaml, text/yaml, */*;q=0.5' },
          signal: controller.signal,
          ...(dispatcher ? { dispatcher } : {}),
        });
        const location = response.headers.location;
        if (REDIRECT.has(response.statusCode) && typeof location === 'string') {
          await response.body.dump();
          if (hop >= MAX_REDIRECTS) throw this.error(what, current, `more than ${MAX_REDIRECTS} redirects`);
          current = new URL(location, current);
          continue;
        }
        const text = await readCapped(response.body, () => this.error(what, current, `larger than ${MAX_SPEC_BYTES} bytes`));
        if (response.statusCode < 200 || response.statusCode >= 300) throw this.error(what, current, `HTTP ${response.statusCode}`);
        return text;
      }
    } catch (error) {
      if (error instanceof SpecFetchError) throw error;
      throw this.error(what, current, controller.signal.aborted ? `timed out after ${this.settings.timeoutMs} ms` : errorMessage(error), error);
    } finally {
      deadline.unsubscribe();
    }
  }

  /** Checks `url` as a fetch would (scheme, addresses) without fetching it: a SpecFetchError when refused. */
  async check(url: URL, what: string): Promise<void> {
    if (!this.trusts(url, what)) await this.addressesOf(url, what);
  }

  /** Closes the connections this load opened. */
  async close(): Promise<void> {
    await this.agent?.close();
  }

  /**
   * The dispatcher to reach `url` through, after its host passed the check. A trusted host
   * (`allowPrivateRefs`, `trustedHosts`) goes through `config.dispatcher` when there is one.
   */
  private async dispatcherFor(url: URL, what: string): Promise<Dispatcher | undefined> {
    const trusted = this.trusts(url, what);
    if (trusted && this.settings.dispatcher) return this.settings.dispatcher;
    const addresses = await this.addressesOf(url, what, trusted);
    if (addresses) this.checked.set(url.hostname.toLowerCase(), addresses);
    this.agent ??= new Agent({ connect: { lookup: this.pinnedLookup } });
    return this.agent;
  }

  /** Whether `url`'s host skips the address check; only http(s) URLs are fetched at all. */
  private trusts(url: URL, what: string): boolean {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw this.error(what, url, `only http and https URLs are fetched, not ${url.protocol}`);
    }
    return this.settings.allowPrivateRefs || this.settings.trustedHosts.includes(bareHost(url));
  }

  /** The addresses of a named host, each checked unless `trusted`; an IP literal is checked as it is (no lookup). */
  private async addressesOf(url: URL, what: string, trusted = false): Promise<LookupAddress[] | undefined> {
    const host = bareHost(url);
    if (isIPv4(host) || url.hostname.startsWith('[')) {
      const kind = addressClass(host);
      if (kind && !trusted) throw this.refused(what, url, `${host} is a ${kind} address`);
      return undefined;
    }
    const addresses = await this.resolve(host, what, url);
    const bad = trusted ? undefined : addresses.find((a) => addressClass(a.address) !== undefined);
    if (bad) throw this.refused(what, url, `${host} resolves to ${bad.address}, a ${addressClass(bad.address)} address`);
    return addresses;
  }

  private async resolve(host: string, what: string, url: URL): Promise<LookupAddress[]> {
    let addresses: readonly LookupAddress[];
    try {
      addresses = await (this.settings.lookup ?? ((name: string) => dnsLookup(name, { all: true, verbatim: true })))(host);
    } catch (error) {
      throw this.error(what, url, `cannot resolve ${host}: ${errorMessage(error)}`, error);
    }
    if (addresses.length === 0) throw this.error(what, url, `${host} resolves to no address`);
    return [...addresses];
  }

  /** Answers the connection's lookup from the addresses checked for that host; never asks DNS again. */
  private readonly pinnedLookup: PinnedLookup = (hostname, options, callback) => {
    const addresses = this.checked.get(hostname.toLowerCase());
    if (!addresses) return callback(new Error(`${hostname} was not checked before connecting`), '');
    const usable = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
    const [first] = usable;
    if (!first) return callback(new Error(`${hostname} has no checked IPv${String(options.family)} address`), '');
    if (options.all) return callback(null, usable);
    return callback(null, first.address, first.family);
  };

  private refused(what: string, url: URL, why: string): SpecFetchError {
    return this.error(
      what,
      url,
      `refused: ${why}; a fetched spec, its $refs and redirects may not reach ${RANGES} (set allowPrivateRefs: true, or list the host in trustedHosts, for a spec you trust)`,
    );
  }

  /** `url` is the hop that failed; named when a redirect led there. */
  private error(what: string, url: URL, why: string, cause?: unknown): SpecFetchError {
    const hop = what.includes(url.href) ? '' : ` (redirected to ${url.href})`;
    return new SpecFetchError(this.settings.redact(`Fetching ${what}${hop} failed: ${why}`), this.settings.redact(why), { cause });
  }
}

/** The host of a URL in lower case, without the brackets of an IPv6 literal. */
function bareHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy(): unknown }, tooLarge: () => Error): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_SPEC_BYTES) {
      body.destroy();
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
