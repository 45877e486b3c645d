/**
 * An organization's fleet version (`fleet_versions`): what fleet coherence reads (its agents,
 * `agent_claims.org_id`, and their active cards) changed since the last read if it moved. It replaces
 * a fingerprint hashed over every agent of the organization on each read, which cost ~1.7 ms of
 * PostgreSQL per reputation recomputation in an organization of 500 agents (issue 25): the version is
 * one primary-key read.
 *
 * Kept by triggers, so every write path (an API's, a worker's, a cascade, an operator's SQL) moves it
 * in the transaction of its change. A claim moved between organizations moves both; a card put (the
 * old version deactivated, the new one inserted) moves its agent's organization. Drawn from one
 * sequence, so a version is never seen twice, even by an organization deleted and made again under
 * its id (its row stays: one per organization ever made).
 *
 * A version must be taken in commit order (a reader that saw version n must never miss a change
 * that commits later under a smaller one), so each organization's version is one row, written under
 * its lock. The triggers are deferred to the commit, so that lock is held only while the transaction
 * commits, not for the rest of it: one organization's claim and card writes take turns only there.
 * A table of its own rather than a column of `orgs`, whose row teams and conscience writes lock first.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const ddl = `
create sequence fleet_version_seq;
create table fleet_versions (
  org_id text primary key,
  version bigint not null
);

create function bump_fleet_version(org text) returns void language sql as $$
  insert into fleet_versions (org_id, version) values (org, nextval('fleet_version_seq'))
  on conflict (org_id) do update set version = excluded.version
$$;

create function bump_claim_fleet_version() returns trigger language plpgsql as $$
begin
  if tg_op <> 'DELETE' then
    if new.org_id is not null then
      perform bump_fleet_version(new.org_id);
    end if;
  end if;
  if tg_op <> 'INSERT' then
    if old.org_id is not null and (tg_op = 'DELETE' or old.org_id is distinct from new.org_id) then
      perform bump_fleet_version(old.org_id);
    end if;
  end if;
  return null;
end $$;

create function bump_card_fleet_version() returns trigger language plpgsql as $$
declare
  agent text;
  org text;
begin
  if tg_op = 'DELETE' then
    agent := old.agent_id;
  else
    agent := new.agent_id;
  end if;
  select c.org_id into org from agent_claims c where c.agent_id = agent;
  if org is not null then
    perform bump_fleet_version(org);
  end if;
  return null;
end $$;

create constraint trigger agent_claims_fleet_version after insert or delete or update of org_id on agent_claims
  deferrable initially deferred for each row execute function bump_claim_fleet_version();
create constraint trigger cards_fleet_version after insert or delete or update of active, card on cards
  deferrable initially deferred for each row execute function bump_card_fleet_version();
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(ddl).unprepared)
