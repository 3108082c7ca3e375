-- index annotations_study ON annotations
CREATE INDEX annotations_study ON annotations(study_id, annotator);

-- index annotations_target ON annotations
CREATE INDEX annotations_target ON annotations(target_kind, target_id);

-- index assignments_queue ON assignments
CREATE INDEX assignments_queue ON assignments(study_id, annotator_id, position);

-- index assignments_target ON assignments
CREATE INDEX assignments_target ON assignments(study_id, target_kind, target_id);

-- index construction_builds_bench ON construction_builds
CREATE INDEX construction_builds_bench ON construction_builds(benchmark, source);

-- index episodes_cell ON episodes
CREATE INDEX episodes_cell ON episodes(benchmark, method, persona_id);

-- index episodes_run ON episodes
CREATE INDEX episodes_run ON episodes(run_id, status);

-- index episodes_sample ON episodes
CREATE INDEX episodes_sample ON episodes(sample_id);

-- index graphs_benchmark ON graphs
CREATE INDEX graphs_benchmark ON graphs(benchmark);

-- index judgments_run ON judgments
CREATE INDEX judgments_run ON judgments(run_id, judge, task);

-- index samples_benchmark ON samples
CREATE INDEX samples_benchmark ON samples(benchmark, k);

-- index study_plays_annotator ON study_plays
CREATE INDEX study_plays_annotator ON study_plays(annotator_id);

-- index worlds_benchmark ON worlds
CREATE INDEX worlds_benchmark ON worlds(benchmark);

-- table annotations ON annotations
CREATE TABLE annotations (
    annotation_id INTEGER PRIMARY KEY AUTOINCREMENT,
    study_id TEXT,
    annotator TEXT NOT NULL,
    target_kind TEXT NOT NULL,
    target_id TEXT NOT NULL,
    label_kind TEXT NOT NULL,
    value TEXT NOT NULL,
    turn INTEGER,
    self_played INTEGER NOT NULL DEFAULT 0,
    seconds REAL,
    created_at TEXT NOT NULL
);

-- table annotators ON annotators
CREATE TABLE annotators (
        annotator_id TEXT PRIMARY KEY,
        display_name TEXT NOT NULL,
        role TEXT NOT NULL,
        created_at TEXT NOT NULL
    );

-- table assignments ON assignments
CREATE TABLE assignments (
        assignment_id INTEGER PRIMARY KEY AUTOINCREMENT,
        study_id TEXT NOT NULL REFERENCES studies(study_id),
        annotator_id TEXT NOT NULL REFERENCES annotators(annotator_id),
        role TEXT NOT NULL,
        target_kind TEXT NOT NULL,
        target_id TEXT NOT NULL,
        condition TEXT NOT NULL DEFAULT '',
        position INTEGER NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending',
        opened_at TEXT,
        completed_at TEXT,
        UNIQUE (study_id, annotator_id, role, target_kind, target_id, condition)
    );

-- table construction_builds ON construction_builds
CREATE TABLE construction_builds (
        build_id TEXT PRIMARY KEY,
        benchmark TEXT NOT NULL,
        source TEXT NOT NULL,
        world_id TEXT,
        kind TEXT NOT NULL,
        params TEXT NOT NULL,
        stats TEXT NOT NULL,
        created_at TEXT NOT NULL
    );

-- table episodes ON episodes
CREATE TABLE episodes (
    episode_id TEXT PRIMARY KEY,
    run_id TEXT REFERENCES runs(run_id),
    sample_id TEXT NOT NULL,
    benchmark TEXT NOT NULL,
    method TEXT NOT NULL,
    persona_id TEXT NOT NULL,
    seed INTEGER NOT NULL,
    parent_episode_id TEXT,
    header TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'running',
    outcome TEXT,
    n_events INTEGER NOT NULL DEFAULT 0,
    summary TEXT,
    created_at TEXT NOT NULL,
    ended_at TEXT
);

-- table events ON events
CREATE TABLE events (
    episode_id TEXT NOT NULL REFERENCES episodes(episode_id),
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    turn INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (episode_id, seq)
) WITHOUT ROWID;

-- table graphs ON graphs
CREATE TABLE graphs (
    graph_id TEXT PRIMARY KEY,
    benchmark TEXT NOT NULL,
    env_id TEXT NOT NULL,
    root_intent_id TEXT NOT NULL,
    source TEXT NOT NULL,
    body TEXT NOT NULL
);

-- table judgments ON judgments
CREATE TABLE judgments (
    judgment_id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT,
    judge TEXT NOT NULL,
    task TEXT NOT NULL,
    target_id TEXT NOT NULL,
    value TEXT NOT NULL,
    raw TEXT,
    created_at TEXT NOT NULL
);

-- table llm_cache ON llm_cache
CREATE TABLE llm_cache (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    namespace TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    cost_usd REAL,
    created_at TEXT NOT NULL
);

-- table meta ON meta
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

-- table runs ON runs
CREATE TABLE runs (
    run_id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    spec TEXT NOT NULL,
    status TEXT NOT NULL,
    total INTEGER NOT NULL DEFAULT 0,
    completed INTEGER NOT NULL DEFAULT 0,
    errors INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

-- table samples ON samples
CREATE TABLE samples (
    sample_id TEXT PRIMARY KEY,
    benchmark TEXT NOT NULL,
    graph_id TEXT NOT NULL,
    fault_types TEXT NOT NULL,
    k INTEGER NOT NULL,
    split TEXT NOT NULL,
    source TEXT NOT NULL,
    body TEXT NOT NULL
);

-- table session_judgments ON session_judgments
CREATE TABLE session_judgments (
        session_id TEXT NOT NULL REFERENCES sessions(session_id),
        judge TEXT NOT NULL,
        value TEXT NOT NULL,
        raw TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (session_id, judge)
    );

-- table sessions ON sessions
CREATE TABLE sessions (
        session_id TEXT PRIMARY KEY,
        source TEXT NOT NULL,
        body TEXT NOT NULL,
        n_messages INTEGER NOT NULL,
        n_user_turns INTEGER NOT NULL,
        n_tool_calls INTEGER NOT NULL,
        platform_score REAL,
        metadata TEXT NOT NULL,
        imported_at TEXT NOT NULL
    );

-- table sqlite_sequence ON sqlite_sequence
CREATE TABLE sqlite_sequence(name,seq);

-- table studies ON studies
CREATE TABLE studies (
        study_id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        spec TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'open',
        created_at TEXT NOT NULL
    );

-- table study_annotators ON study_annotators
CREATE TABLE study_annotators (
        study_id TEXT NOT NULL REFERENCES studies(study_id),
        annotator_id TEXT NOT NULL REFERENCES annotators(annotator_id),
        added_at TEXT NOT NULL,
        PRIMARY KEY (study_id, annotator_id)
    );

-- table study_plays ON study_plays
CREATE TABLE study_plays (
        episode_id TEXT PRIMARY KEY,
        study_id TEXT,
        annotator_id TEXT NOT NULL,
        role TEXT NOT NULL,
        sample_id TEXT NOT NULL,
        assignment_id INTEGER,
        created_at TEXT NOT NULL
    );

-- table worlds ON worlds
CREATE TABLE worlds (
    world_id TEXT PRIMARY KEY,
    benchmark TEXT NOT NULL,
    name TEXT NOT NULL,
    source TEXT NOT NULL,
    payload TEXT NOT NULL,
    summary TEXT NOT NULL,
    created_at TEXT NOT NULL
);

-- trigger events_no_delete ON events
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;

-- trigger events_no_update ON events
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;

-- meta schema_version = 3
