-- Caps and rate limits of tools and MCP servers, shared by every run and worker
-- of a tenant (engine/store/tool_limits.py owns this SQL; docs/decisions.md 88).
--
-- One row per (tenant, limited key): a python tool's `tool:<module:function>`, an
-- MCP server's `mcp:<url or command>`, an MCP tool's `mcp:<...>#<tool>`.
CREATE TABLE plait_tool_limits (
    tenant_id     text NOT NULL,
    key           text NOT NULL,
    -- What the last call declared (shown by the API; every call enforces its own).
    concurrency   integer,
    rate          text,
    -- The operator's caps (POST /tool-limits/caps): they tighten what calls declare.
    cap_concurrency integer CHECK (cap_concurrency >= 1),
    cap_rate        text,
    cap_interval    double precision CHECK (cap_interval > 0),
    -- GCRA: the theoretical arrival time of the next call at the declared rate.
    tat           timestamptz,
    -- A 429 with Retry-After: no call of this key starts before this time.
    paused_until  timestamptz,
    paused_reason text,
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, key)
);

-- Calls holding a slot (`running`, for keys with a concurrency cap) or waiting for
-- one. Both carry a lease their process renews: a killed worker's rows expire and
-- are deleted by the next take of their key, so no slot leaks.
CREATE TABLE plait_tool_calls (
    id          uuid NOT NULL,
    tenant_id   text NOT NULL,
    key         text NOT NULL,
    state       text NOT NULL CHECK (state IN ('waiting', 'running')),
    -- waiting: what it waits for (concurrency, rate, paused).
    reason      text,
    tool        text NOT NULL,
    run_id      text,
    node        text,
    since       timestamptz NOT NULL,
    lease_until timestamptz NOT NULL,
    PRIMARY KEY (id, key),
    FOREIGN KEY (tenant_id, key) REFERENCES plait_tool_limits ON DELETE CASCADE
);

CREATE INDEX plait_tool_calls_key ON plait_tool_calls (tenant_id, key, state);

-- Take a call's turn under every key it is limited by, all or nothing:
-- a slot of each key with a cap and a token of each key with a rate (the
-- stricter of the call's and the operator's), unless a key is paused. Refused, the call is recorded as waiting (reason, key) and the
-- answer says how long until a token or the pause's end (NULL: until a slot is
-- released, which has no known time), the limit that held it and whether the
-- spec or the operator set it. One statement, rows locked in the order
-- given (callers sort the keys), timed by the database's clock for all workers.
CREATE FUNCTION plait_tool_take(
    p_id uuid,
    p_tenant text,
    p_keys text[],
    p_concurrency integer[],
    p_rate text[],
    p_interval double precision[],
    p_burst integer[],
    p_tool text,
    p_run text,
    p_node text,
    p_lease double precision
)
RETURNS TABLE (granted boolean, wait_seconds double precision, reason text, blocked text,
               held_by text, set_by text)
LANGUAGE plpgsql AS $$
DECLARE
    v_now   timestamptz := clock_timestamp();
    v_lease timestamptz := clock_timestamp() + make_interval(secs => p_lease);
    v_row   plait_tool_limits%ROWTYPE;
    v_busy  integer;
    v_tat   timestamptz;
    v_tats  timestamptz[] := '{}';
    v_cap   integer;
    v_every double precision;
    v_caps  integer[] := '{}';
    v_everys double precision[] := '{}';
    v_wait  double precision;
    v_why   text;
    v_key   text;
    v_held  text;
    v_by    text;
    i       integer;
BEGIN
    FOR i IN 1 .. cardinality(p_keys) LOOP
        INSERT INTO plait_tool_limits (tenant_id, key) VALUES (p_tenant, p_keys[i])
        ON CONFLICT DO NOTHING;
        SELECT * INTO v_row FROM plait_tool_limits
        WHERE tenant_id = p_tenant AND key = p_keys[i] FOR UPDATE;
        v_tats := array_append(v_tats, v_row.tat);
        -- The stricter of the call's own limit and the operator's cap (least/greatest skip NULLs).
        v_cap := least(p_concurrency[i], v_row.cap_concurrency);
        v_every := greatest(p_interval[i], v_row.cap_interval);
        v_caps := array_append(v_caps, v_cap);
        v_everys := array_append(v_everys, v_every);
        IF v_why IS NOT NULL THEN
            CONTINUE;  -- refused already; the rest are only locked
        END IF;
        IF v_row.paused_until > v_now THEN
            v_why := 'paused';
            v_key := p_keys[i];
            v_wait := extract(epoch FROM v_row.paused_until - v_now);
            CONTINUE;
        END IF;
        IF v_cap IS NOT NULL THEN
            -- Slots (and waiters) of workers that stopped renewing them.
            DELETE FROM plait_tool_calls
            WHERE tenant_id = p_tenant AND key = p_keys[i] AND lease_until <= v_now;
            SELECT count(*) INTO v_busy FROM plait_tool_calls
            WHERE tenant_id = p_tenant AND key = p_keys[i] AND state = 'running' AND id <> p_id;
            IF v_busy >= v_cap THEN
                v_why := 'concurrency';
                v_key := p_keys[i];
                v_wait := NULL;
                v_held := v_cap::text;
                v_by := CASE WHEN v_cap = p_concurrency[i] THEN 'spec' ELSE 'operator' END;
                CONTINUE;
            END IF;
        END IF;
        IF v_every IS NOT NULL THEN
            -- GCRA: the call conforms when the arrival time it would push out is at
            -- most `burst` intervals ahead of now.
            v_tat := greatest(coalesce(v_row.tat, v_now), v_now);
            IF v_tat - v_now > make_interval(secs => v_every * (p_burst[i] - 1)) THEN
                v_why := 'rate';
                v_key := p_keys[i];
                v_wait := extract(epoch FROM v_tat - v_now) - v_every * (p_burst[i] - 1);
                v_by := CASE WHEN v_every = p_interval[i] THEN 'spec' ELSE 'operator' END;
                v_held := CASE WHEN v_by = 'spec' THEN p_rate[i] ELSE v_row.cap_rate END;
                CONTINUE;
            END IF;
        END IF;
    END LOOP;

    IF v_why IS NOT NULL THEN
        DELETE FROM plait_tool_calls WHERE id = p_id AND key <> v_key;
        INSERT INTO plait_tool_calls
            (id, tenant_id, key, state, reason, tool, run_id, node, since, lease_until)
        VALUES (p_id, p_tenant, v_key, 'waiting', v_why, p_tool, p_run, p_node, v_now, v_lease)
        ON CONFLICT (id, key) DO UPDATE SET reason = EXCLUDED.reason, lease_until = v_lease;
        RETURN QUERY SELECT false, v_wait, v_why, v_key, v_held, v_by;
        RETURN;
    END IF;

    DELETE FROM plait_tool_calls WHERE id = p_id;
    FOR i IN 1 .. cardinality(p_keys) LOOP
        UPDATE plait_tool_limits SET
            concurrency = p_concurrency[i],
            rate = p_rate[i],
            tat = CASE WHEN v_everys[i] IS NULL THEN tat
                  ELSE greatest(coalesce(v_tats[i], v_now), v_now)
                       + make_interval(secs => v_everys[i]) END,
            updated_at = v_now
        WHERE tenant_id = p_tenant AND key = p_keys[i];
        IF v_caps[i] IS NOT NULL THEN
            INSERT INTO plait_tool_calls
                (id, tenant_id, key, state, tool, run_id, node, since, lease_until)
            VALUES (p_id, p_tenant, p_keys[i], 'running', p_tool, p_run, p_node, v_now, v_lease);
        END IF;
    END LOOP;
    RETURN QUERY SELECT true, NULL::double precision, NULL::text, NULL::text, NULL::text,
        NULL::text;
END
$$;
