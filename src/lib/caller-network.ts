// Any thread; pure. The network a per-IP limit counts a caller under. An IPv4 address is one caller, but one
// IPv6 host is routinely given a whole /64 (SLAAC, privacy addresses, a provider's delegation), so counting
// IPv6 per address would let one host walk past every per-IP limit (the anonymous rate limit, the maker
// upgrades waiting for auth) by changing its last 64 bits. IPv6 callers are counted per /64; an IPv4 address
// mapped into IPv6 (a dual-stack listener) is counted as the IPv4 address it is.

const IPV6_GROUPS = 8;
const NETWORK_GROUPS = 4; // the /64
const WIDE_NETWORK_GROUPS = 3; // the /48

/**
 * `addressText` as uWebSockets.js gives it (getRemoteAddressAsText: "127.0.0.1", or eight 4-digit hex groups
 * "0000:...:0001"); the compressed IPv6 form ("2001:db8::1") is accepted too. Returns "a.b.c.d" for IPv4
 * (mapped or not) and "g1:g2:g3:g4::/64" for IPv6. Text that is neither is returned unchanged: a caller is
 * still counted, under its own key.
 */
export function callerNetwork(addressText: string): string {
  if (!addressText.includes(':')) return addressText;
  const groups = expandIpv6(addressText);
  if (groups === null) return addressText;
  if (isIpv4Mapped(groups)) return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`;
  return `${groups
    .slice(0, NETWORK_GROUPS)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/**
 * The coarser network a second, wider limit counts a caller under: an IPv4 /24 ("a.b.c.0/24") or an IPv6
 * /48 ("g1:g2:g3::/48"), the blocks a single operator is typically given (a /48 is the usual IPv6 site
 * assignment; a /24 the smallest IPv4 block routed on the internet). A per-address limit alone lets a
 * caller with a block of addresses multiply it; this one bounds the block. Text that is neither address
 * form is returned unchanged, as by callerNetwork.
 */
export function callerWideNetwork(addressText: string): string {
  if (!addressText.includes(':')) {
    const m = /^(\d{1,3}\.\d{1,3}\.\d{1,3})\.\d{1,3}$/.exec(addressText);
    return m === null ? addressText : `${m[1]}.0/24`;
  }
  const groups = expandIpv6(addressText);
  if (groups === null) return addressText;
  if (isIpv4Mapped(groups)) return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.0/24`;
  return `${groups
    .slice(0, WIDE_NETWORK_GROUPS)
    .map((g) => g.toString(16))
    .join(':')}::/48`;
}

/** The eight 16-bit groups of an IPv6 address in text, or null when it is not one. */
function expandIpv6(text: string): number[] | null {
  const halves = text.toLowerCase().split('::');
  if (halves.length > 2) return null;
  const head = halves[0] === '' ? [] : halves[0]!.split(':');
  const tail = halves.length === 2 && halves[1] !== '' ? halves[1]!.split(':') : [];
  const missing = IPV6_GROUPS - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  if (!groups.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return null;
  return groups.map((g) => parseInt(g, 16));
}

/** ::ffff:a.b.c.d in its hex form (::ffff:7f00:1): an IPv4 caller reaching a dual-stack listener. */
function isIpv4Mapped(groups: readonly number[]): boolean {
  return groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
}
