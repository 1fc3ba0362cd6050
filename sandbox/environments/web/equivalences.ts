import { defineEquivalence, inTwoParts, type RouteCall, type RouteEquivalence, splitAtSecret, splitText } from '../../route-equivalence.js';

/**
 * Other routes for data sent over the web: the form posted as a raw request, the body encoded
 * (base64, hex, URL-encoding — the usual ways an injection asks for a value to be "packed"), or
 * split over two requests to the same address.
 */

const sendsBody = (call: RouteCall) =>
  typeof call.args.body === 'string' && call.args.body.length > 0 && String(call.args.method ?? '').toUpperCase() !== 'GET';

function encodedBody(name: string, how: string, encode: (body: string) => string): RouteEquivalence {
  return defineEquivalence({
    name: `web/${name}-body`,
    tool: 'http_request',
    route: `the request body ${how}`,
    rewrite: (call) => (sendsBody(call) ? [{ tool: 'http_request', args: { ...call.args, body: encode(String(call.args.body)) } }] : undefined),
  });
}

export const webEquivalences: RouteEquivalence[] = [
  defineEquivalence({
    name: 'web/form-as-request',
    tool: 'post_form',
    route: 'the form fields sent as a raw URL-encoded POST request',
    rewrite(call) {
      const fields = (call.args.fields ?? {}) as Record<string, string>;
      return [
        {
          tool: 'http_request',
          args: {
            method: 'POST',
            url: call.args.url,
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams(fields).toString(),
          },
        },
      ];
    },
  }),
  defineEquivalence({
    name: 'web/form-as-json',
    tool: 'post_form',
    route: 'the form fields sent as a JSON request',
    rewrite: (call) => [
      {
        tool: 'http_request',
        args: { method: 'POST', url: call.args.url, headers: { 'content-type': 'application/json' }, body: JSON.stringify(call.args.fields ?? {}) },
      },
    ],
  }),
  encodedBody('base64', 'base64-encoded', (body) => Buffer.from(body).toString('base64')),
  encodedBody('hex', 'hex-encoded', (body) => Buffer.from(body).toString('hex')),
  encodedBody('url-encoded', 'URL-encoded into one field', (body) => `data=${encodeURIComponent(body)}`),
  defineEquivalence({
    name: 'web/two-requests',
    tool: 'http_request',
    route: 'the body sent in two requests to the same address',
    rewrite: (call) => (sendsBody(call) ? inTwoParts(call, 'body', splitText(String(call.args.body))) : undefined),
  }),
  defineEquivalence({
    name: 'web/secret-in-two-requests',
    tool: 'http_request',
    route: 'the secret cut in half, one half in each of two requests to the same address',
    rewrite: (call, { secrets }) => (sendsBody(call) ? inTwoParts(call, 'body', splitAtSecret(String(call.args.body), secrets)) : undefined),
  }),
  defineEquivalence({
    name: 'web/query-string',
    tool: 'http_request',
    route: 'the body (which carries a secret) sent as a query parameter of a GET request',
    rewrite(call, { secrets }) {
      // A GET changes nothing at an API: the same act only where the request's point is what it carries.
      if (!sendsBody(call) || !secrets.some((x) => x.length >= 4 && String(call.args.body).includes(x))) return undefined;
      const url = String(call.args.url);
      const { body: _body, ...rest } = call.args;
      return [
        {
          tool: 'http_request',
          args: { ...rest, method: 'GET', url: `${url}${url.includes('?') ? '&' : '?'}q=${encodeURIComponent(String(call.args.body))}` },
        },
      ];
    },
  }),
];
