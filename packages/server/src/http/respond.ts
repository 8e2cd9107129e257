// Responses always carry `Content-Length` (keep-alive without chunking); errors are
// `{"error":{"code":"FLURRY_E_…","message":"…"}}`.
import type { ServerResponse } from 'node:http';
import type { FlurryError } from '@flurry/core';
import { httpStatusOf, ServerErrorCode } from '../errors.js';

export const JSON_TYPE = 'application/json; charset=utf-8';
export const TEXT_TYPE = 'text/plain; charset=utf-8';

/** Sends a body known to be ASCII (IDs, JSON of IDs): its length is its byte length. */
export function sendAscii(res: ServerResponse, status: number, type: string, body: string): number {
  res.writeHead(status, { 'content-type': type, 'content-length': body.length });
  res.end(body);
  return status;
}

/** Sends any string body (UTF-8). */
export function sendText(
  res: ServerResponse,
  status: number,
  type: string,
  body: string,
  extra?: Record<string, string>,
): number {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), ...extra });
  res.end(body);
  return status;
}

/** Seconds a client should wait before retrying a 503. */
export const RETRY_AFTER_SECONDS = 1;

const INTERNAL = {
  code: ServerErrorCode.INTERNAL,
  message: 'an unexpected error occurred inside the service; it has been logged. Retry, and report it if it persists.',
};

/**
 * Sends a coded error with its status; anything else is a generic 500 `FLURRY_E_INTERNAL` (the caller logs it).
 * `extra.close` closes the connection after it (HTTP/1 only: h2 forbids `connection`).
 */
export function sendError(res: ServerResponse, err: unknown, extra?: { allow?: string; close?: boolean }): number {
  const status = httpStatusOf(err); // 500 for anything but a FlurryError
  const { code, message } = status === 500 ? INTERNAL : (err as FlurryError);
  if (res.headersSent) {
    res.destroy();
    return status;
  }
  const headers: Record<string, string> = {};
  if (status === 503) headers['retry-after'] = String(RETRY_AFTER_SECONDS);
  if (status === 401) headers['www-authenticate'] = 'Bearer realm="flurry"';
  if (extra?.allow) headers['allow'] = extra.allow;
  if (extra?.close && res.req.httpVersionMajor === 1) headers['connection'] = 'close';
  return sendText(res, status, JSON_TYPE, JSON.stringify({ error: { code, message } }), headers);
}
