/** The store contract (docs/spec/api.md "Stores") against memoryStore and jsonlStore. */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { memoryStore } from '../../stores/memory.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { storeContract } from './contract.js'

storeContract('memoryStore', () => ({ store: memoryStore() }))

storeContract('jsonlStore', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'turnlog-contract-'))
  return { store: jsonlStore(dir), cleanup: () => rm(dir, { recursive: true, force: true }) }
}, { numRuns: 40 })
