import type { Db } from '../db/knex';

/** Every campaign with the ids of its links, by id: what a form may name in `campaign_id`, and where to find links. */
export async function listCampaigns(db: Db): Promise<Array<{ id: number; title: string; link_ids: string[] }>> {
  return db('campaigns as c')
    .leftJoin('campaign_links as l', 'l.campaign_id', 'c.id')
    .groupBy('c.id', 'c.title')
    .orderBy('c.id')
    .select('c.id', 'c.title', db.raw(`coalesce(array_agg(l.id ORDER BY l.id) FILTER (WHERE l.id IS NOT NULL), '{}') AS link_ids`));
}
