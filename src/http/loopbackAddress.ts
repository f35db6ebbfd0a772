import { isIPv4 } from 'node:net';

/**
 * Plain http is for this machine only: 127.0.0.0/8, ::1 and `localhost`. The WHATWG URL parser has
 * already normalised the host (`127.1` and `2130706433` read as 127.0.0.1, IPv6 in brackets), so
 * the check is on what a connection would really reach, not on how the address was spelled.
 */
export function isLoopbackHostname(hostname: string): boolean {
  if (hostname === 'localhost' || hostname === '[::1]') return true;
  return isIPv4(hostname) && hostname.startsWith('127.');
}

/** https anywhere, or http to a loopback address: what may carry a credential. */
export function isSecureOrLoopback(url: URL): boolean {
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHostname(url.hostname));
}

export const secureOrLoopbackRule = 'must be https:// (plain http:// only to a loopback address: 127.0.0.0/8, ::1, localhost)';
