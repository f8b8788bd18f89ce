/**
 * Gateways of the cluster, one page at a time (`limit`/`continue`), so a
 * caller never holds more than one page of full objects. The API server
 * builds each page from a consistent snapshot; when a continue token expires
 * (410) the list starts over once from the beginning, as kubectl does.
 */
import { SplitList, splitList } from '../json/list-items.js';
import { asRecord, own } from '../json/record.js';
import type { KubeClient } from '../kube/client.js';
import { BadAnswerError, describeKubeError, httpStatusOf } from '../kube/errors.js';
import { GATEWAY_API_GROUP } from '../rules/index.js';

const GATEWAY_VERSION = 'v1';

/** A page's Gateways: an array, or (from the API server) objects decoded one by one as they are read. */
export type PageItems = Iterable<unknown> & { readonly length: number };

export interface GatewayPage {
  readonly items: PageItems;
  /** 1-based page number within this pass. */
  readonly page: number;
  /** True on the first page after an expired continue token: everything before it must be forgotten. */
  readonly restarted: boolean;
}

export interface GatewayListOptions {
  /** Only this namespace; undefined lists all namespaces. */
  readonly namespace?: string | undefined;
  /** Objects per page (the API server may return fewer). */
  readonly pageSize: number;
  /** Per page request. */
  readonly timeoutMs: number;
}

/** One page request: the objects and the continue token of the next page. */
export type FetchGatewayPage = (
  continueToken: string | undefined,
) => Promise<{ readonly items: PageItems; readonly continueToken: string | undefined }>;

const WHAT = 'list Gateways';

function listingError(err: unknown): Error {
  return new Error(`listing Gateways (${GATEWAY_API_GROUP}/${GATEWAY_VERSION}): ${describeKubeError(err)}`);
}

/**
 * A page's items as their JSON texts, each decoded when read and held by no
 * one here afterwards: judging a page holds one Gateway's objects at a time.
 */
class DecodedOneByOne implements Iterable<unknown> {
  constructor(private readonly texts: readonly string[]) {}

  get length(): number {
    return this.texts.length;
  }

  *[Symbol.iterator](): Iterator<unknown> {
    for (const text of this.texts) {
      let object: unknown;
      try {
        object = JSON.parse(text);
      } catch {
        // As the same answer decoded whole fails: client.json's error, as gatewayPages words it.
        throw listingError(new BadAnswerError('not-json', `${WHAT}: the answer is not JSON`));
      }
      yield object;
    }
  }
}

/** Lists Gateways page by page through the kube client (`limit`, `continue`). */
export function gatewayPageFetcher(client: KubeClient, options: GatewayListOptions): FetchGatewayPage {
  const where = options.namespace === undefined ? '' : `/namespaces/${encodeURIComponent(options.namespace)}`;
  const path = `/apis/${GATEWAY_API_GROUP}/${GATEWAY_VERSION}${where}/gateways`;
  return async (continueToken) => {
    const query: Record<string, string> = { limit: String(options.pageSize) };
    if (continueToken !== undefined) query['continue'] = continueToken;
    const answer = await client.json({
      path,
      query,
      timeoutMs: options.timeoutMs,
      what: WHAT,
      parse: (text) => splitList(text) ?? JSON.parse(text),
    });
    const split = answer instanceof SplitList ? answer : undefined;
    const body = asRecord(split ? split.envelope : answer);
    const items = split ? split.items : own(body, 'items');
    // Not a list (a proxy's page): taking it for an empty page would report every Gateway gone.
    if (!Array.isArray(items))
      throw new BadAnswerError('not-a-list', 'the Gateway list answer has no items array');
    const next = own(asRecord(own(body, 'metadata')), 'continue');
    return {
      items: split ? new DecodedOneByOne(split.items) : (items as unknown[]),
      continueToken: typeof next === 'string' && next !== '' ? next : undefined,
    };
  };
}

/** Pages of Gateways; an expired continue token restarts the pass once, a second expiry is an error. */
export async function* gatewayPages(fetchPage: FetchGatewayPage): AsyncGenerator<GatewayPage> {
  let restarted = false;
  let announceRestart = false;
  let token: string | undefined;
  let page = 0;
  for (;;) {
    let result: Awaited<ReturnType<FetchGatewayPage>>;
    try {
      result = await fetchPage(token);
    } catch (err) {
      if (httpStatusOf(err) === 410 && token !== undefined && !restarted) {
        restarted = true;
        announceRestart = true;
        token = undefined;
        page = 0;
        continue;
      }
      throw listingError(err);
    }
    page++;
    yield { items: result.items, page, restarted: announceRestart };
    announceRestart = false;
    if (result.continueToken === undefined) return;
    token = result.continueToken;
  }
}
