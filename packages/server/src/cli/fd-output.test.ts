import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FLURRY_BIN, tempDir } from '../test-support.js';
import { fdOutput, type CliOutput, type WriteSync } from './fd-output.cjs';
import { write } from './io.js';

/** A stand-in for process.stdout that records what it is given, and how often it was made. */
function recordingStream(): { made: number; chunks: Buffer[]; make: () => CliOutput } {
  const rec = { made: 0, chunks: [] as Buffer[], make: (): CliOutput => out };
  const out: CliOutput = {
    write(chunk, cb) {
      rec.chunks.push(Buffer.from(chunk));
      cb?.(null);
      return true;
    },
    once: () => out,
  };
  rec.make = () => {
    rec.made++;
    return out;
  };
  return rec;
}

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: write`), { code });
}

test('GIVEN a file descriptor THEN fdOutput writes every byte to it, in order, and never makes the stream', async () => {
  const dir = tempDir('fd-output');
  try {
    const file = path.join(dir, 'out.txt');
    const fd = openSync(file, 'w');
    const stream = recordingStream();
    const out = fdOutput(fd, stream.make);
    await write(out, 'first 1859214170478923776\n');
    await write(out, 'zweite Zeile: ü € 𝄞\n');
    closeSync(fd);
    assert.equal(readFileSync(file, 'utf8'), 'first 1859214170478923776\nzweite Zeile: ü € 𝄞\n');
    assert.equal(stream.made, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('GIVEN short writes THEN fdOutput finishes each write', () => {
  const got: number[] = [];
  const oneByte: WriteSync = (_fd, buf, off) => {
    got.push(buf[off]);
    return 1;
  };
  const stream = recordingStream();
  const out = fdOutput(1, stream.make, oneByte);
  assert.equal(out.write('ü€x\n'), true);
  assert.equal(Buffer.from(got).toString('utf8'), 'ü€x\n');
  assert.equal(stream.made, 0);
});

test('GIVEN a full non-blocking pipe (EAGAIN) mid-write THEN the rest of that write and every later one go to the stream: nothing lost, split or reordered', () => {
  const written: number[] = [];
  let budget = 5; // bytes the "pipe" takes before it is full
  const fill: WriteSync = (_fd, buf, off, len) => {
    if (budget === 0) throw errno('EAGAIN');
    const n = Math.min(budget, len);
    for (let i = 0; i < n; i++) written.push(buf[off + i]);
    budget -= n;
    return n;
  };
  const stream = recordingStream();
  const out = fdOutput(1, stream.make, fill);
  out.write('ab€cd\n'); // the pipe takes 'ab' and the 3 bytes of '€'
  out.write('ü-second\n');
  budget = 100; // the pipe drains, but the order is kept only if later writes stay on the stream
  out.write('third\n');
  assert.equal(stream.made, 1);
  const all = Buffer.concat([Buffer.from(written), ...stream.chunks]).toString('utf8');
  assert.equal(all, 'ab€cd\nü-second\nthird\n');
  assert.equal(Buffer.from(written).toString('utf8'), 'ab€');
});

test('GIVEN the reader is gone (EPIPE) THEN the write callback gets the error and write() rejects', async () => {
  const stream = recordingStream();
  const out = fdOutput(1, stream.make, () => {
    throw errno('EPIPE');
  });
  await assert.rejects(write(out, 'x\n'), { code: 'EPIPE' });
  assert.equal(stream.made, 0);
});

test('GIVEN the bin writes to a non-blocking pipe that fills THEN flurry next prints all of its IDs (EAGAIN handed to process.stdout)', async () => {
  const dir = tempDir('fd-output-pipe');
  try {
    // A preload makes process.stdout first, as a library might: for a pipe Node sets O_NONBLOCK.
    // This test then reads nothing for 500 ms, so the 64 KiB pipe fills and the bin's writes
    // meet EAGAIN. (A child Node starts gets blocking stdio; other parents may pass non-blocking.)
    const preload = path.join(dir, 'stdout-first.cjs');
    writeFileSync(preload, 'process.stdout;\n');
    const n = 200_000;
    const bin = spawn(
      process.execPath,
      ['--require', preload, FLURRY_BIN, 'next', '-n', String(n), '--registry', `file:${dir}/registry`],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', FLURRY_ALLOW_ROOT: '1' } },
    );
    let stderr = '';
    bin.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const chunks: Buffer[] = [];
    const exited = new Promise<number | null>((resolve) => bin.on('close', resolve));
    await new Promise((r) => setTimeout(r, 500));
    bin.stdout.on('data', (d: Buffer) => chunks.push(d));
    const code = await exited;
    assert.equal(code, 0, stderr);
    const lines = Buffer.concat(chunks).toString('utf8').trimEnd().split('\n');
    assert.equal(lines.length, n);
    let last = -1n;
    for (const line of lines) {
      const id = BigInt(line);
      assert.ok(id > last, `increasing: ${line} after ${last}`);
      last = id;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
