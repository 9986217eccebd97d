// Reads a JSON array of cases on stdin and prints the seed's answers as a JSON array.
// The seed module next to this file is the seed's relevance_judge.ts with its type annotations
// removed (see tests/seed_js/README.md); no logic is changed.
import { excerptFor, buildJudgeInput, pickOnTopic, isRelevanceCheckEnabled } from './relevance_judge.mjs'

const chunks = []
process.stdin.on('data', (c) => chunks.push(c))
process.stdin.on('end', () => {
  const cases = JSON.parse(Buffer.concat(chunks).toString('utf8'))
  const out = cases.map((c) => {
    switch (c.fn) {
      case 'excerptFor':
        return c.maxChars === undefined ? excerptFor(c.text, c.question) : excerptFor(c.text, c.question, c.maxChars)
      case 'buildJudgeInput':
        return buildJudgeInput(c.question, c.passages)
      case 'pickOnTopic':
        return pickOnTopic(c.value)
      case 'isRelevanceCheckEnabled':
        return isRelevanceCheckEnabled(c.raw)
      default:
        throw new Error('unknown fn ' + c.fn)
    }
  })
  process.stdout.write(JSON.stringify(out))
})
