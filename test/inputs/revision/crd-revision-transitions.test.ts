/**
 * What a change of the Gateway CRD does to the revision watch: which changes
 * count as a switch (the switches counter, lastSwitchAt, the warn line), which
 * tell the listeners (onChange: the revision in force changed), the log level
 * of each new decision, that a read of the same CRD changes nothing, and that
 * only the Gateway CRD decides when a list answer carries other CRDs too.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RevisionSource } from '../../../src/inputs/revision/crd-revision.js';
import { GATEWAY_CRD_NAME } from '../../../src/crd/patch.js';
import { FakeApiServer } from '../../kit/fake-apiserver.js';
import { storedGatewayCrd } from '../../kit/gateway-crd.js';
import { eventually, startCrdRevisionWatch, type CrdWatchHarness } from '../../kit/helpers.js';

const CRDS = 'customresourcedefinitions';

let fake: FakeApiServer | undefined;
let source: RevisionSource | undefined;

afterEach(async () => {
  await source?.close();
  await fake?.close();
  fake = source = undefined;
});

interface Started extends CrdWatchHarness {
  /** How often the onChange listeners were told. */
  told: () => number;
}

function start(f: FakeApiServer): Started {
  const h = startCrdRevisionWatch(f.kubeconfigPath);
  source = h.source;
  let told = 0;
  source.onChange?.(() => told++);
  return { ...h, told: () => told };
}

type Kind = 'provisional' | 'experimental' | 'none' | 'undecidable' | 'absent';

/** The stored Gateway CRD of each kind; undecidable: a routability pattern neither revision has. */
function crdOf(kind: Exclude<Kind, 'absent'>, generation: number) {
  if (kind !== 'undecidable') return storedGatewayCrd(kind, { generation });
  const crd = storedGatewayCrd('provisional', { generation });
  return JSON.parse(
    JSON.stringify(crd).replaceAll('"pattern":"^(External|Cluster|', '"pattern":"^(Public|Cluster|'),
  ) as typeof crd;
}

function install(f: FakeApiServer, kind: Kind, generation: number): void {
  if (kind === 'absent') {
    if (f.crds.has(GATEWAY_CRD_NAME)) f.crds.delete(GATEWAY_CRD_NAME);
  } else f.crds.set(GATEWAY_CRD_NAME, crdOf(kind, generation));
}

const STATE: Record<Kind, string> = {
  provisional: 'provisional',
  experimental: 'experimental',
  none: 'field-missing',
  undecidable: 'undecidable',
  absent: 'not-installed',
};

const crdState = (s: RevisionSource): unknown => s.describe()['crdState'];

describe('a change of the Gateway CRD', () => {
  it.each([
    // from, to, a switch?, listeners told of the change (0 or 1), the new decision's log line
    {
      from: 'provisional',
      to: 'experimental',
      what: "an upgrade to upstream's schema is a switch, and the listeners are told",
      switched: true,
      told: 1,
      level: 40,
      msg: /^GEP-5093 revision switched: provisional → experimental; /,
    },
    {
      from: 'absent',
      to: 'experimental',
      what: "Gateway API installed with upstream's schema is a switch from provisional",
      switched: true,
      told: 1,
      level: 40,
      msg: /^GEP-5093 revision switched: provisional → experimental; /,
    },
    // To or from undecidable is no switch: there was, or is, no revision to switch from or to.
    {
      from: 'undecidable',
      to: 'experimental',
      what: 'a schema that becomes decidable is no switch (there was no revision), but the listeners are told',
      switched: false,
      told: 1,
      level: 30,
      msg: /^GEP-5093 revision in force: experimental; /,
    },
    {
      from: 'experimental',
      to: 'undecidable',
      what: 'a schema that becomes undecidable is no switch, logged as an error, the listeners told',
      switched: false,
      told: 1,
      level: 50,
      msg: /^cannot tell which GEP-5093 revision/,
    },
    // The same revision for another reason: a new decision, logged, but no switch and nothing to tell.
    {
      from: 'none',
      to: 'provisional',
      what: 'crd-patch adding the field keeps the revision: logged at info, no switch, no one told',
      switched: false,
      told: 0,
      level: 30,
      msg: /^GEP-5093 revision in force: provisional; .*crd-patch schema/,
    },
    {
      from: 'provisional',
      to: 'none',
      what: 'the field gone keeps the revision: logged at warn, no switch, no one told',
      switched: false,
      told: 0,
      level: 40,
      msg: /^GEP-5093 revision in force: provisional; .*has no routability field/,
    },
    {
      from: 'experimental',
      to: 'absent',
      what: 'Gateway API uninstalled is a switch back to provisional',
      switched: true,
      told: 1,
      level: 40,
      msg: /^GEP-5093 revision switched: experimental → provisional; Gateway API is not installed/,
    },
  ] as const)('$from → $to: $what', async ({ from, to, switched, told, level, msg }) => {
    fake = await FakeApiServer.start();
    install(fake, from, 1);
    const h = start(fake);
    await eventually(() => crdState(h.source) === STATE[from], `the first read (${from})`);
    // The first read tells the listeners when it gives a revision (undecidable gives none).
    const toldAtFirst = from === 'undecidable' ? 0 : 1;
    expect(h.told()).toBe(toldAtFirst);
    const before = h.source.describe();
    await fake.until(() => fake!.watcherCount(CRDS) === 1, 'the CRD watch');
    const logged = h.lines.length;
    install(fake, to, 2);
    await eventually(() => crdState(h.source) === STATE[to], `the change (${to})`);
    const after = h.source.describe();
    expect(after['switches']).toBe(switched ? 1 : 0);
    expect('lastSwitchAt' in after).toBe(switched);
    expect(h.told()).toBe(toldAtFirst + told);
    const lines = h.lines.slice(logged);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level,
      msg: expect.stringMatching(msg),
      crdState: STATE[to],
      previousCrdState: STATE[from],
      previousRevision: before['revision'],
      gepRevision: after['revision'],
    });
    // The generation of the CRD read is logged, where there is a CRD.
    if (to === 'absent') expect(lines[0]).not.toHaveProperty('crdGeneration');
    else expect(lines[0]).toMatchObject({ crdGeneration: 2 });
  });

  it('a first read of a CRD that carries a revision is logged at info, with its generation and no previous revision', async () => {
    fake = await FakeApiServer.start();
    install(fake, 'experimental', 1);
    const h = start(fake);
    await eventually(() => h.source.current() === 'experimental', 'the first read');
    const first = h.lines.find((l) => l.msg.startsWith('GEP-5093 revision in force'));
    expect(first).toMatchObject({ level: 30, crdState: 'experimental', crdGeneration: 1 });
    expect(first).not.toHaveProperty('previousRevision');
  });

  it('a relist that finds the same CRD logs nothing and tells no one', async () => {
    fake = await FakeApiServer.start();
    install(fake, 'provisional', 1);
    const h = start(fake);
    await eventually(() => h.source.current() === 'provisional', 'the first read');
    await fake.until(() => fake!.watcherCount(CRDS) === 1, 'the CRD watch');
    const inForce = (): number =>
      h.lines.filter((l) => l.msg.startsWith('GEP-5093 revision in force')).length;
    const synced = (): number => h.lines.filter((l) => l.msg === 'watch synced').length;
    expect([inForce(), synced(), h.told()]).toEqual([1, 1, 1]);
    // A network failure: the watch restarts and lists the same CRD again.
    fake.dropWatches(CRDS);
    await eventually(() => synced() === 2, 'the relist');
    // The relist's onChange runs on the next turn after the list (setImmediate): let it.
    await new Promise((r) => setImmediate(r));
    expect([inForce(), h.told()]).toEqual([1, 1]);
    expect(h.source.describe()).toMatchObject({ crdState: 'provisional', switches: 0 });
  });

  it('only the Gateway CRD decides, when a list answer also carries other CRDs', async () => {
    fake = await FakeApiServer.start();
    // A server (or proxy) that ignores the metadata.name field selector on list: every CRD
    // comes back, another one (sorted) first. The watch that follows is the fake's own.
    const other = { ...storedGatewayCrd('provisional'), metadata: { name: 'backends.example.com' } };
    fake.crds.set('backends.example.com', other);
    install(fake, 'experimental', 1);
    fake.addRoute((req, res, url) => {
      if (url.pathname !== `/apis/apiextensions.k8s.io/v1/${CRDS}` || url.searchParams.has('watch'))
        return false;
      const text = JSON.stringify({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinitionList',
        metadata: { resourceVersion: fake!.crds.get(GATEWAY_CRD_NAME)!.metadata['resourceVersion'] },
        items: [fake!.crds.get('backends.example.com'), fake!.crds.get(GATEWAY_CRD_NAME)],
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(text);
      return true;
    });
    const h = start(fake);
    await eventually(() => crdState(h.source) !== 'not read yet', 'the first read');
    expect(h.source.current()).toBe('experimental');
  });
});
