import { isIPv4, isIPv6 } from 'node:net';

/** Why an address is not a public unicast one, or `undefined` when it is. */
export type AddressClass =
  | 'loopback'
  | 'private-network'
  | 'link-local'
  | 'unique-local'
  | 'shared (CGNAT)'
  | 'unspecified'
  | 'multicast'
  | 'reserved';

/** IPv4 ranges as [first octets, prefix length, class]; what a fetched spec must not reach. */
const V4_RANGES: readonly (readonly [number, number, number, number, number, AddressClass])[] = [
  [0, 0, 0, 0, 8, 'unspecified'],
  [10, 0, 0, 0, 8, 'private-network'],
  [100, 64, 0, 0, 10, 'shared (CGNAT)'],
  [127, 0, 0, 0, 8, 'loopback'],
  [169, 254, 0, 0, 16, 'link-local'],
  [172, 16, 0, 0, 12, 'private-network'],
  [192, 0, 0, 0, 24, 'reserved'],
  [192, 168, 0, 0, 16, 'private-network'],
  [198, 18, 0, 0, 15, 'reserved'],
  [224, 0, 0, 0, 4, 'multicast'],
  [240, 0, 0, 0, 4, 'reserved'],
];

/**
 * The class of an IP address (v4, or v6 with or without brackets) that is not public unicast:
 * loopback, private, link-local, unique-local, CGNAT, unspecified, multicast or reserved.
 * IPv6 forms that carry an IPv4 address (v4-mapped `::ffff:a.b.c.d`, v4-compatible, 6to4
 * `2002::/16`, NAT64 `64:ff9b::/96`) are judged by that address. Not an IP address → `'reserved'`
 * (refused rather than guessed at).
 *
 * @example
 * addressClass('::ffff:7f00:1'); // 'loopback'
 * addressClass('93.184.216.34'); // undefined
 */
export function addressClass(address: string): AddressClass | undefined {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIPv4(bare)) return v4Class(v4Octets(bare));
  if (!isIPv6(bare)) return 'reserved';
  const groups = v6Groups(bare);
  const embedded = embeddedV4(groups);
  if (embedded) return v4Class(embedded);
  const [first = 0] = groups;
  if (groups.every((g) => g === 0)) return 'unspecified';
  if (groups.slice(0, 7).every((g) => g === 0) && groups[7] === 1) return 'loopback';
  if ((first & 0xffc0) === 0xfe80) return 'link-local';
  if ((first & 0xffc0) === 0xfec0) return 'reserved'; // site-local, deprecated
  if ((first & 0xfe00) === 0xfc00) return 'unique-local';
  if ((first & 0xff00) === 0xff00) return 'multicast';
  return undefined;
}

function v4Octets(address: string): number[] {
  return address.split('.').map(Number);
}

function v4Class(octets: readonly number[]): AddressClass | undefined {
  const value = octets.reduce((acc, o) => acc * 256 + o, 0);
  if (value === 0xffffffff) return 'reserved';
  for (const [a, b, c, d, prefix, kind] of V4_RANGES) {
    const base = ((a * 256 + b) * 256 + c) * 256 + d;
    const size = 2 ** (32 - prefix);
    if (value >= base && value < base + size) return kind;
  }
  return undefined;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a dotted IPv4 tail converted). */
function v6Groups(address: string): number[] {
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const [a = 0, b = 0, c = 0, d = 0] = v4Octets(dotted[1]);
    text = `${text.slice(0, -dotted[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((g) => parseInt(g, 16));
}

/** The IPv4 address inside a v4-mapped, v4-compatible, 6to4 or NAT64 IPv6 address. */
function embeddedV4(groups: readonly number[]): number[] | undefined {
  const octets = (hi: number, lo: number): number[] => [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff];
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const zeroHead = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (zeroHead && g5 === 0xffff) return octets(g6, g7); // ::ffff:a.b.c.d
  if (zeroHead && g5 === 0 && (g6 !== 0 || g7 > 1)) return octets(g6, g7); // ::a.b.c.d (deprecated)
  if (g0 === 0x2002) return octets(g1, g2); // 6to4
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return octets(g6, g7); // NAT64
  return undefined;
}
