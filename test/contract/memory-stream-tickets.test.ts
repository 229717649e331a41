import { MemoryStreamTickets } from '../../src/adapters/memory/memory-stream-tickets.js';
import { streamTicketsContract } from './stream-tickets.contract.js';

streamTicketsContract('MemoryStreamTickets', () => Promise.resolve(new MemoryStreamTickets()));
