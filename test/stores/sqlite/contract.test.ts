/** The store contract (docs/spec/api.md "Stores": one suite for every store) against sqliteStore, on each driver. */
import { join } from 'node:path'
import { sqliteStore } from '../../../stores/sqlite/index.js'
import { storeContract } from '../contract.js'
import { DRIVERS, tempDir } from './helpers.js'

for (const driver of DRIVERS) {
  storeContract(`sqliteStore (${driver})`, async () => {
    const store = sqliteStore(join(await tempDir(), 'contract.db'), { driver })
    return { store, cleanup: () => store.close() }
  }, { numRuns: 40 })
}
