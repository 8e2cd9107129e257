// The worker thread behind analyze.mjs's offThread(): one job, its answer posted back, then exit.
// Jobs read ID files and return only small results (counts, node runs, examples).
import { parentPort, workerData } from 'node:worker_threads';
import { RecordingRow, analyzeNow } from './analyze.mjs';
import { readIds, scanFaults, tsExtractor } from './ids.mjs';

const jobs = {
  analyze({ files, layout, opts }) {
    const row = new RecordingRow();
    const result = analyzeNow(row, files, layout, opts);
    return { ops: row.recorded(), result };
  },
  scanFaults({ file, layout, faults, ttlMs }) {
    return scanFaults(readIds(file).ids, tsExtractor(layout), layout.epochMs, faults, ttlMs);
  },
};

try {
  parentPort.postMessage({ answer: jobs[workerData.job](workerData.args) });
} catch (e) {
  parentPort.postMessage({ error: e?.message ?? String(e), stack: e?.stack });
}
