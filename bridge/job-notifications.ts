// Ready jobs announced over PostgreSQL's LISTEN/NOTIFY: an enqueue on any instance notifies the
// database's channel for this schema, and every instance's idle workers wake at once instead of at the
// end of their poll. The poll stays as the fallback, only slower (core/storage/postgres-listener.ts).
import { type ChannelListener, PostgresListener, channelSql } from '../core/storage/postgres-listener.ts';

/** The channel for the jobs of the schema the connection works in. */
export const JOBS_CHANNEL_SQL = channelSql('jobs');

export type JobListener = ChannelListener;

/** The process's listener for ready jobs on the database at `url`. */
export function postgresJobListener(url: string): JobListener {
  return new PostgresListener(url, JOBS_CHANNEL_SQL);
}
