import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import pg from 'pg';
import { bodyListSql, joinBodies } from './body-list.js';

const POSTGRES_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

describe('joinBodies', () => {
  let client: pg.Client | undefined;
  let skip: string | false = false;
  before(async () => {
    const candidate = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3_000 });
    try {
      await candidate.connect();
      client = candidate;
    } catch (error) {
      if (process.env.CI === 'true') throw error;
      skip = `PostgreSQL is not reachable: ${String(error)}`;
    }
  });
  after(async () => client?.end());

  it('PostgreSQL splits every list of JSON texts back exactly as pg would have sent them', async (t) => {
    if (skip !== false || client === undefined) return t.skip(String(skip));
    const db = client;
    const json = fc.jsonValue().map((value) => JSON.stringify(value) ?? 'null');
    const tricky = fc.constantFrom(
      JSON.stringify({ text: 'quote " backslash \\ both \\" end' }),
      JSON.stringify({ text: 'controls \u0000\u0001\n\t\r\u001e\u001f, lone \ud800 and \udfff, emoji 😀' }),
      JSON.stringify('NULL'),
      JSON.stringify(''),
      JSON.stringify({ '{': '}', ',': '"' }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(json, tricky), { maxLength: 8 }), async (texts) => {
        const split = await db.query<{ a: string[] }>(`SELECT ${bodyListSql('$1')} AS a`, [joinBodies(texts)]);
        const encoded = await db.query<{ a: string[] }>('SELECT $1::text[] AS a', [texts]);
        assert.deepEqual(split.rows[0]!.a, texts);
        assert.deepEqual(encoded.rows[0]!.a, texts);
      }),
      { numRuns: 300 },
    );
  });

  it('would be wrong for a text JSON.stringify did not write (why bodies must be its output)', async (t) => {
    if (skip !== false || client === undefined) return t.skip(String(skip));
    const raw = 'a raw separator \u001e in it';
    const result = await client.query<{ a: string[] }>(`SELECT ${bodyListSql('$1')} AS a`, [joinBodies([raw])]);
    assert.notDeepEqual(result.rows[0]!.a, [raw]);
  });
});
