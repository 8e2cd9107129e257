/*
 * Twitter Snowflake's service definition (twitter-archive/snowflake, Snowflake.thrift,
 * 2010), served by `flurry serve --thrift-port P` over the framed transport and the
 * binary protocol (packages/server/src/thrift/).
 *
 * The only change from Twitter's file: get_id declares the two exceptions the original
 * server threw without declaring them (InvalidUserAgentError for a user agent that does
 * not match [a-zA-Z][a-zA-Z\-0-9]*, InvalidSystemClock when the generator refuses to
 * issue because of its clock). The `throws` clause adds fields 1 and 2 to the reply
 * struct only; a client generated from Twitter's original file skips them and reports a
 * TApplicationException (MISSING_RESULT), so it still sees a failure, exactly as before.
 */
namespace java com.twitter.service.snowflake.gen
namespace rb Snowflake

exception InvalidSystemClock {
  1: string message,
}

exception InvalidUserAgentError {
  1: string message,
}

service Snowflake {
  i64 get_worker_id()
  i64 get_timestamp()
  i64 get_id(1:string useragent) throws (1: InvalidUserAgentError iua, 2: InvalidSystemClock isc)
  i64 get_datacenter_id()
}
