/**
 * The Lua scripts that make each write of the Redis backend one atomic step (node-redis's
 * `defineScript`: EVALSHA, falling back to EVAL once per server). A put checks `ifVersion`, takes
 * the type's next version, writes the record hash, its expiry and its index entry, and publishes
 * the change in the same step, so the change feed carries changes in the order Redis applied them.
 * Every key a script touches is passed in KEYS and shares the type's hash tag (one Cluster slot).
 */
import { defineScript } from 'redis';
import type { CommandParser } from 'redis';

/** Keys of one record's type and the record itself (see redis-backend.ts for the layout). */
export interface RecordKeys {
  readonly record: string;
  readonly index: string;
  readonly counter: string;
}

const PUT = `
local current = redis.call('HGET', KEYS[1], 'v')
if ARGV[4] ~= '' then
  if ARGV[4] == '0' then
    if current then return 0 end
  elseif current ~= ARGV[4] then
    return 0
  end
end
local version = redis.call('INCR', KEYS[3])
redis.call('DEL', KEYS[1])
if ARGV[3] == '' then
  redis.call('HSET', KEYS[1], 'v', version, 'd', ARGV[2])
  redis.call('ZADD', KEYS[2], '+inf', ARGV[1])
else
  redis.call('HSET', KEYS[1], 'v', version, 'd', ARGV[2], 'e', ARGV[3])
  redis.call('PEXPIREAT', KEYS[1], ARGV[3])
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
end
redis.call('PUBLISH', ARGV[5], cjson.encode({kind = 'put', type = ARGV[6], id = ARGV[1], version = version}))
return version
`;

const DELETE = `
local existed = redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if existed == 0 then return 0 end
local version = redis.call('INCR', KEYS[3])
redis.call('PUBLISH', ARGV[2], cjson.encode({kind = 'delete', type = ARGV[3], id = ARGV[1], version = version}))
return version
`;

const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/** The arguments of a put, as the script reads them. */
export interface PutArguments {
  readonly keys: RecordKeys;
  readonly type: string;
  readonly id: string;
  readonly data: string;
  /** Unix ms, or undefined for no expiry. */
  readonly expiresAt: number | undefined;
  readonly ifVersion: number | undefined;
  readonly channel: string;
}

/**
 * The scripts, for `createClient({ scripts })` (and Sentinel, Cluster): each resolves with the new
 * version, or 0 for "not written" (an ifVersion mismatch; a delete of an absent record) — versions
 * are never 0. `releaseLease` resolves with 1 when it ended the lease.
 */
export const RECORD_SCRIPTS = {
  putRecord: defineScript({
    NUMBER_OF_KEYS: 3,
    SCRIPT: PUT,
    parseCommand(parser: CommandParser, args: PutArguments) {
      pushKeys(parser, args.keys);
      parser.push(
        args.id,
        args.data,
        args.expiresAt === undefined ? '' : String(args.expiresAt),
        args.ifVersion === undefined ? '' : String(args.ifVersion),
        args.channel,
        args.type,
      );
    },
    transformReply: (reply: unknown) => Number(reply),
  }),
  deleteRecord: defineScript({
    NUMBER_OF_KEYS: 3,
    SCRIPT: DELETE,
    parseCommand(parser: CommandParser, keys: RecordKeys, type: string, id: string, channel: string) {
      pushKeys(parser, keys);
      parser.push(id, channel, type);
    },
    transformReply: (reply: unknown) => Number(reply),
  }),
  releaseLease: defineScript({
    NUMBER_OF_KEYS: 1,
    SCRIPT: RELEASE,
    parseCommand(parser: CommandParser, key: string, token: string) {
      parser.pushKey(key);
      parser.push(token);
    },
    transformReply: (reply: unknown) => Number(reply),
  }),
};

function pushKeys(parser: CommandParser, keys: RecordKeys): void {
  parser.pushKey(keys.record);
  parser.pushKey(keys.index);
  parser.pushKey(keys.counter);
}
