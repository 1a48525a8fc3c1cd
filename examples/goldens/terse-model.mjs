// A model under test that skips the tool and answers at once: `turnlog eval` fails the golden
// ("same tool sequence: 1 call(s) differ; first: removed weather({"city":"Paris"}) in turn 1").
import { scriptedModel } from 'turnlog'

export const model = () => scriptedModel([{ text: 'It is probably mild in Paris.' }])
