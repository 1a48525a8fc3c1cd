/** The store contract (docs/spec/api.md "Stores": one suite for every store) against postgresStore on a real server. */
import { afterAll } from 'vitest'
import { postgresStore } from '../../../stores/postgres/index.js'
import { storeContract } from '../contract.js'
import { dropAll, freshDb } from './db.js'

afterAll(dropAll)

storeContract('postgresStore', async () => {
  const store = postgresStore({ connectionString: await freshDb('contract') })
  await store.migrate()
  return { store, cleanup: () => store.close() }
}, { numRuns: 30 })
