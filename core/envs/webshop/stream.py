"""Stream WebShop's real data files into a catalogue file, in constant memory and resumably.

Reads ``items_ins_v2*.json`` (attributes), ``items_human_ins.json`` (human instructions),
``items_shuffle*.json`` (products) and ``human_goals.json`` (the baselines' instruction order)
one record at a time with ijson, and writes them in batches into a
:mod:`~core.envs.webshop.shopdb` SQLite file with its FTS5 index. The product semantics are
WebShop's ``load_products`` / ``get_human_goals`` (see :mod:`core.envs.webshop.importer`).

* **Constant memory**: records are parsed one at a time and inserted in batches; duplicate
  ASINs and attribute lookups go through the file's own indexes. Only the goals (≈12k human
  instructions) are held in memory, to shuffle them like WebShop.
* **Resumable**: every batch commits together with a checkpoint (stage and record position);
  re-running after a kill skips what was committed. A change to any input file restarts.
* **Errors** name the file and the record's position (``12345.name``, ``B0X.0.instruction``),
  and the partial file is removed (a bad record fails the same way on every run).
* **MTurk ids**: ``worker_id`` / ``assignment_id`` are never read into the catalogue.
* **Goal order**: with ``human_goals.json``, goal ``hNNNNN`` is the annotated goal whose
  instruction is entry NNNNN of that list, so ``h00000``–``h00499`` are the baselines' 500 test
  tasks; annotated goals the list does not name follow as ``gNNNNN`` in WebShop's shuffled order.
"""

from __future__ import annotations

import fcntl
import hashlib
import itertools
import json
import os
import random
import sqlite3
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from pydantic import TypeAdapter

from core.envs.webshop import postfile
from core.envs.webshop.importer import (
    GOAL_SHUFFLE_SEED,
    RawAttributes,
    RawHumanInstruction,
    RawItem,
    _options,
    parse_pricing,
)
from core.envs.webshop.models import Goal, Product
from core.envs.webshop.postings import POSTINGS_SCHEMA, merge_segments, segment_rows, tokens
from core.envs.webshop.search import document_text
from core.envs.webshop.shopdb import SCHEMA
from core.envs.webshop.source_files import Progress, Sources, read_records, validate_record
from core.envs.webshop.text import heuristic_nouns, price_text, price_upper_for
from core.errors import ConfigError

BATCH = 5000
"""Records per committed batch."""

TEST_SPLIT = 500
"""The baselines' test split: the first 500 entries of ``human_goals.json``."""

_HUMAN_LIST = TypeAdapter(list[RawHumanInstruction])
_STAGES = ("attrs", "human", "products", "goals", "index", "done")


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA auto_vacuum=INCREMENTAL")  # only takes effect on a new file
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=OFF")  # a killed process loses nothing committed
    conn.execute("PRAGMA cache_size=-131072")  # 128 MB
    conn.executescript(SCHEMA + POSTINGS_SCHEMA)
    return conn


def _meta(conn: sqlite3.Connection, key: str, default: str = "") -> str:
    row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return str(row[0]) if row else default


def _set(conn: sqlite3.Connection, **values: object) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO meta VALUES (?, ?)", [(k, str(v)) for k, v in values.items()]
    )


def _batched(it: Iterator[Any], n: int) -> Iterator[list[Any]]:
    while True:
        chunk = list(itertools.islice(it, n))
        if not chunk:
            return
        yield chunk


class _Importer:
    def __init__(
        self,
        sources: Sources,
        conn: sqlite3.Connection,
        progress: bool,
        out: TextIO | None,
        db_path: Path,
    ) -> None:
        self.s = sources
        self.conn = conn
        self.db_path = db_path
        self.progress = progress
        self.out = out

    def _bar(self, label: str, path: Path) -> Progress:
        return Progress(label, path.stat().st_size, self.progress, self.out)

    def attrs(self) -> None:
        if self.s.attrs is None:
            return
        path = self.s.attrs
        done = int(_meta(self.conn, "done:attrs", "0"))
        recs = read_records(path, "dict", self._bar("attributes", path), done)
        for chunk in _batched(recs, BATCH):
            rows = []
            for _i, (asin, obj) in chunk:
                a: RawAttributes = validate_record(RawAttributes, obj, path, str(asin))
                rows.append((str(asin), a.model_dump_json()))
            self.conn.execute("BEGIN")
            self.conn.executemany("INSERT OR REPLACE INTO attrs VALUES (?, ?)", rows)
            _set(self.conn, **{"done:attrs": chunk[-1][0] + 1})
            self.conn.execute("COMMIT")

    def human(self) -> None:
        if self.s.human is None:
            return
        path = self.s.human
        done = int(_meta(self.conn, "done:human", "0"))
        recs = read_records(path, "dict", self._bar("human", path), done)
        for chunk in _batched(recs, BATCH):
            rows = []
            for _i, (asin, obj) in chunk:
                records: list[RawHumanInstruction] = validate_record(
                    _HUMAN_LIST, obj, path, str(asin)
                )
                for pos, r in enumerate(records):
                    opts = r.instruction_options
                    values = list(opts.values()) if isinstance(opts, dict) else list(opts)
                    body = {  # worker_id / assignment_id are never kept
                        "instruction": r.instruction,
                        "instruction_attributes": list(r.instruction_attributes),
                        "instruction_options": values,
                    }
                    rows.append((str(asin), pos, json.dumps(body, ensure_ascii=False)))
            self.conn.execute("BEGIN")
            self.conn.execute(
                f"DELETE FROM human WHERE asin IN ({','.join('?' * len(chunk))})",
                [str(a) for _, (a, _o) in chunk],
            )
            self.conn.executemany("INSERT OR REPLACE INTO human VALUES (?, ?, ?)", rows)
            _set(self.conn, **{"done:human": chunk[-1][0] + 1})
            self.conn.execute("COMMIT")

    def products(self) -> None:
        path = self.s.items
        done = int(_meta(self.conn, "done:products", "0"))
        rid = int(_meta(self.conn, "next_rid", "0"))
        recs = read_records(path, "list", self._bar("products", path), done)
        for chunk in _batched(recs, BATCH):
            fresh: dict[str, tuple[int, RawItem]] = {}
            for i, obj in chunk:
                it: RawItem = validate_record(RawItem, obj, path, str(i))
                asin = it.asin
                if asin == "nan" or len(asin) > 10 or not asin or asin in fresh:
                    continue
                if not it.name.strip():
                    raise ConfigError("empty product name", file=path, field=f"{i}.name")
                if not it.query.strip():
                    raise ConfigError("empty scrape query", file=path, field=f"{i}.query")
                fresh[asin] = (i, it)
            if fresh:
                marks = ",".join("?" * len(fresh))
                keys = list(fresh)
                for (asin,) in self.conn.execute(
                    f"SELECT asin FROM products WHERE asin IN ({marks})", keys
                ).fetchall():
                    fresh.pop(str(asin), None)
            attrs: dict[str, list[str] | None] = {}
            if fresh and self.s.attrs is not None:
                marks = ",".join("?" * len(fresh))
                for asin, body in self.conn.execute(
                    f"SELECT asin, body FROM attrs WHERE asin IN ({marks})", list(fresh)
                ).fetchall():
                    attrs[str(asin)] = json.loads(body).get("attributes")
            rows, docs = [], []
            counts: Counter[tuple[str, str]] = Counter()
            attr_n: Counter[str] = Counter()
            for asin, (_i, it) in fresh.items():
                p = _product(it, attrs.get(asin))
                dl, tf = tokens(document_text(p))
                rows.append((rid, asin, asin.lower(), p.query, dl, p.model_dump_json()))
                docs.append((rid, tf))
                for name, values in p.options.items():
                    counts.update((v, name) for v in values)
                attr_n.update(p.attributes)
                rid += 1
            batch_no = chunk[0][0]
            self.conn.execute("BEGIN")
            self.conn.executemany("INSERT INTO products VALUES (?, ?, ?, ?, ?, ?)", rows)
            self.conn.executemany(
                "INSERT OR REPLACE INTO seg VALUES (?, ?, ?, ?)", segment_rows(batch_no, docs)
            )
            self.conn.executemany(
                "INSERT INTO optcount VALUES (?, ?, ?) "
                "ON CONFLICT(value, name) DO UPDATE SET n = n + excluded.n",
                [(v, name, n) for (v, name), n in counts.items()],
            )
            self.conn.executemany(
                "INSERT INTO attrcount VALUES (?, ?) "
                "ON CONFLICT(attr) DO UPDATE SET n = n + excluded.n",
                list(attr_n.items()),
            )
            _set(self.conn, **{"done:products": chunk[-1][0] + 1, "next_rid": rid})
            self.conn.execute("COMMIT")
        if rid == 0:
            raise ConfigError(
                "no products: the product list is empty (or every record was skipped: "
                "ASIN 'nan', longer than 10 characters, or repeated)",
                file=path,
            )

    def goals(self) -> dict[str, int]:
        goals = self._human_goals() if self.s.human is not None else self._synthetic_goals()
        random.Random(GOAL_SHUFFLE_SEED).shuffle(goals)
        named, matched = self._order(goals)
        self.conn.execute("BEGIN")
        self.conn.execute("DELETE FROM goals")
        self.conn.executemany(
            "INSERT INTO goals VALUES (?, ?, ?)",
            ((i, g.goal_id, g.model_dump_json()) for i, g in enumerate(named)),
        )
        products = int(self.conn.execute("SELECT count(*) FROM products").fetchone()[0])
        clusters = int(
            self.conn.execute("SELECT count(DISTINCT query) FROM products").fetchone()[0]
        )
        test = sum(
            1 for g in named if g.goal_id.startswith("h") and int(g.goal_id[1:]) < TEST_SPLIT
        )
        _set(
            self.conn,
            products=products,
            goals=len(named),
            clusters=clusters,
            human_goals_matched=matched,
            test_goals=test,
            goal_kind="human" if self.s.human is not None else "synthetic",
        )
        self.conn.execute("COMMIT")
        return {"products": products, "goals": len(named)}

    def _human_goals(self) -> list[Goal]:
        goals: list[Goal] = []
        sql = (
            "SELECT p.body, h.body FROM human h JOIN products p ON p.asin = h.asin "
            "ORDER BY p.rid, h.pos"
        )
        for pbody, hbody in self.conn.execute(sql):
            p = Product.model_validate_json(pbody)
            h = json.loads(hbody)
            if not h["instruction_attributes"]:
                continue
            text = str(h["instruction"]).strip(".")
            if text:
                goals.append(_goal(p, text, h["instruction_attributes"], h["instruction_options"]))
        return goals

    def _synthetic_goals(self) -> list[Goal]:
        goals: list[Goal] = []
        sql = "SELECT p.body, a.body FROM products p JOIN attrs a ON a.asin = p.asin ORDER BY p.rid"
        for pbody, abody in self.conn.execute(sql):
            p = Product.model_validate_json(pbody)
            entry = RawAttributes.model_validate_json(abody)
            if not entry.instruction or not entry.instruction_attributes:
                continue
            names = sorted(p.options)
            for combo in itertools.product(*(p.options[n] for n in names)):
                option_text = ", and ".join(f"{n}: {v}" for n, v in zip(names, combo, strict=True))
                text = entry.instruction + (f" with {option_text}" if option_text else "")
                goals.append(_goal(p, text, list(entry.instruction_attributes), list(combo)))
        return goals

    def _order(self, goals: list[Goal]) -> tuple[list[Goal], int]:
        """Name goals ``hNNNNN`` after their ``human_goals.json`` entry, the rest ``gNNNNN``."""
        if self.s.order is None:
            width = max(4, len(str(max(len(goals) - 1, 0))))
            return [
                g.model_copy(update={"goal_id": f"g{i:0{width}d}"}) for i, g in enumerate(goals)
            ], 0
        pending: dict[str, deque[int]] = {}
        for j, g in enumerate(goals):
            pending.setdefault(_norm(_strip_price(g)), deque()).append(j)
        used: set[int] = set()
        named: list[Goal] = []
        path = self.s.order
        for i, text in read_records(path, "list", None):
            if not isinstance(text, str):
                raise ConfigError("expected an instruction string", file=path, field=str(i))
            queue = pending.get(_norm(text))
            if queue:
                j = queue.popleft()
                used.add(j)
                named.append(goals[j].model_copy(update={"goal_id": f"h{i:05d}"}))
        matched = len(named)
        rest = [g for j, g in enumerate(goals) if j not in used]
        named += [g.model_copy(update={"goal_id": f"g{i:05d}"}) for i, g in enumerate(rest)]
        return named, matched

    def index(self) -> None:
        merged = self.conn.execute("SELECT 1 FROM post LIMIT 1").fetchone() is not None
        pending = self.conn.execute("SELECT 1 FROM seg LIMIT 1").fetchone() is not None
        if pending or not merged:  # a kill after the merge committed must not redo it
            self.conn.execute("BEGIN")
            lengths = np.fromiter(
                (r[0] for r in self.conn.execute("SELECT dl FROM products ORDER BY rid")),
                dtype=np.uint32,
            )
            terms = merge_segments(self.conn, lengths)
            _set(self.conn, terms=terms)
            self.conn.execute("COMMIT")
        digest = hashlib.sha256()
        for (body,) in self.conn.execute("SELECT body FROM products ORDER BY rid"):
            digest.update(body.encode())
            digest.update(b"\n")
        for (body,) in self.conn.execute("SELECT body FROM goals ORDER BY pos"):
            digest.update(body.encode())
            digest.update(b"\n")
        self.conn.execute("BEGIN")
        self.conn.execute("DELETE FROM attrs")
        self.conn.execute("DELETE FROM human")
        _set(self.conn, content_hash=digest.hexdigest())
        self.conn.execute("COMMIT")
        self.conn.execute("PRAGMA incremental_vacuum")
        self.postings()

    def postings(self) -> None:
        """Derive the mapped postings file searches read (see :mod:`.postfile`)."""
        n = int(_meta(self.conn, "products", "0"))
        postfile.open_for(self.db_path, lambda: self.conn, n, _meta(self.conn, "content_hash"))


def _strip_price(g: Goal) -> str:
    suffix = price_text(g.price_upper)
    text = g.instruction_text
    return text[: -len(suffix)] if suffix and text.endswith(suffix) else text


def _norm(text: str) -> str:
    return " ".join(text.lower().strip().strip(".").split())


def _product(it: RawItem, attributes: list[str] | None) -> Product:
    bullets = it.small_description
    bullet_list = bullets if isinstance(bullets, list) else ([bullets] if bullets else [])
    price, tag = parse_pricing(it.pricing)
    return Product(
        asin=it.asin,
        name=it.name,
        title=it.name,
        description=it.full_description or "",
        bullet_points=bullet_list,
        price=price,
        price_text=tag,
        category=it.category or "",
        product_category=it.product_category or "",
        query=it.query.lower().strip(),
        attributes=attributes if attributes is not None else ["DUMMY_ATTR"],
        options=_options(it.customization_options),
        name_nouns=heuristic_nouns(it.name),
    )


def _goal(product: Product, instruction: str, attributes: list[str], options: list[str]) -> Goal:
    cap = price_upper_for(product.price)
    return Goal(
        goal_id="pending",
        asin=product.asin,
        instruction_text=instruction + price_text(cap),
        attributes=list(attributes),
        goal_options=list(options),
        price_upper=cap,
        category=product.category,
        query=product.query,
        name=product.name,
        product_category=product.product_category,
    )


def _remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal", postfile.SUFFIX, postfile.SUFFIX + ".lock"):
        Path(str(path) + suffix).unlink(missing_ok=True)


def import_catalogue(
    src: Path,
    db_path: Path,
    *,
    progress: bool = True,
    out: TextIO | None = None,
    stop_after: Callable[[str], bool] | None = None,
) -> dict[str, Any]:
    """Stream WebShop's files in ``src`` into the catalogue file ``db_path`` (resuming).

    Args:
        src: Folder with ``items_shuffle*.json`` and optionally ``items_ins_v2*.json``,
            ``items_human_ins.json`` and ``human_goals.json``.
        db_path: The catalogue file to write (its folder is created).
        progress: Draw a progress bar with rate and ETA on ``out`` (default stderr).
        out: Where the progress bar goes.
        stop_after: Test hook: called after each stage; returning True stops the import there
            (as a kill would), leaving a resumable file.

    Returns:
        ``{"products", "goals", "clusters", "test_goals", "human_goals_matched", "goal_kind",
        "content_hash", "db", "resumed", "seconds"}``.

    Raises:
        ConfigError: naming the file and record of the first problem; the partial catalogue
            file is removed.
    """
    sources = Sources(src)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    with _ImportLock(db_path, src):
        return _import_locked(sources, db_path, progress, out, stop_after)


class _ImportLock:
    """One import of a source folder at a time (an exclusive ``flock`` beside the catalogue).

    A second import of the same folder while the first runs used to write into the same
    catalogue file and fail with ``UNIQUE constraint failed: products.rid``; now it says that
    the folder is being imported.
    """

    def __init__(self, db_path: Path, src: Path) -> None:
        self.path = db_path.parent.with_name(f".{db_path.parent.name}.lock")
        self.src = src
        self.fd: int | None = None

    def __enter__(self) -> _ImportLock:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
            os.close(fd)
            raise ConfigError(
                "this folder is being imported right now"
                + (f" (process {owner})" if owner else "")
                + "; wait for that import to finish, then run it again to see the result",
                file=self.src,
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self.fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None


def _import_locked(
    sources: Sources,
    db_path: Path,
    progress: bool,
    out: TextIO | None,
    stop_after: Callable[[str], bool] | None,
) -> dict[str, Any]:
    """:func:`import_catalogue` once this process holds the folder's import lock."""
    t0 = time.monotonic()
    fp = sources.fingerprint()
    resumed = False
    if db_path.exists():
        stage = ""
        try:
            old = sqlite3.connect(db_path)
            try:
                same = _meta(old, "source") == fp
                stage = _meta(old, "stage")
            finally:
                old.close()
        except sqlite3.DatabaseError:  # not a catalogue file (or a broken one): start over
            same = False
        if not same:
            _remove(db_path)
        else:
            resumed = stage != "done"
    conn = _connect(db_path)
    try:
        if not _meta(conn, "source"):
            _set(conn, source=fp, stage="attrs", attrcount="1")
        imp = _Importer(sources, conn, progress, out, db_path)
        steps: dict[str, Callable[[], object]] = {
            "attrs": imp.attrs,
            "human": imp.human,
            "products": imp.products,
            "goals": imp.goals,
            "index": imp.index,
        }
        for stage in _STAGES[:-1]:
            if _STAGES.index(_meta(conn, "stage")) > _STAGES.index(stage):
                continue
            steps[stage]()
            _set(conn, stage=_STAGES[_STAGES.index(stage) + 1])
            if stop_after is not None and stop_after(stage):
                return {"stopped_after": stage, "db": str(db_path)}
        summary = {
            k: int(_meta(conn, k, "0"))
            for k in ("products", "goals", "clusters", "test_goals", "human_goals_matched")
        }
        summary_text = {
            "goal_kind": _meta(conn, "goal_kind"),
            "content_hash": _meta(conn, "content_hash"),
        }
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode=DELETE")
    except Exception:  # any failure but a kill: no partial catalogue stays behind
        conn.close()
        _remove(db_path)
        try:
            db_path.parent.rmdir()  # only when the import made it and it is empty
        except OSError:
            pass
        raise
    finally:
        conn.close()
    return {
        **summary,
        **summary_text,
        "db": str(db_path),
        "resumed": resumed,
        "seconds": round(time.monotonic() - t0, 3),
    }
