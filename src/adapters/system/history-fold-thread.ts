// The entry of an audit's worker thread (ThreadHistoryFolds): one replay, fed a page per message.
import { parentPort } from 'node:worker_threads';
import { HistoryReplay, replayOutcome } from '../../domain/index.js';
import type { FoldAnswer, FoldRequest } from './thread-history-folds.js';

const port = parentPort;
if (!port) throw new Error('history-fold-thread.js runs as a worker thread');
const replay = new HistoryReplay();
const answer = (message: FoldAnswer) => port.postMessage(message);

port.on('message', (request: FoldRequest) => {
  if (request.type === 'apply') {
    for (const event of request.page) replay.apply(event);
    answer({ type: 'applied' });
  } else {
    answer({ type: 'outcome', outcome: replayOutcome(replay.result(), request.now, request.staleAfterMs) });
  }
});
