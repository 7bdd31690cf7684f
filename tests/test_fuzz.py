"""Damaged files: hyperslab answers like h5py + hdf5plugin, or raises a documented error.

The campaign (``tests/fuzz``, see its docstring for the oracle and the allowed
exceptions) reads every mutant through every read path in child processes; a crash, a
hang, an undocumented exception type, a value that differs from h5py's (or, where h5py
reports damage, from what was written) or a refusal of data h5py reads right fails it.
``make fuzz`` runs the same campaign for minutes with random seeds.  The other tests
check the harness itself: a harness that cannot see a crash, a hang or a wrong value
would pass anything.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hyperslab
from fuzz import campaign, corpus, layout, probes, worker
from fuzz.mutate import Mutation, draw, parse_spec
from fuzz.pool import Job, Pool, Result
from fuzz.verdict import MISSING, allowed, judge
from hyperslab import errors

SEED = 20240519
ROUNDS = 12
"""Mutants per (base, mutation kind) pair in ``make test``: about a minute on 2 cores."""


def test_damaged_files_read_right_or_raise_documented_errors(tmp_path: Path) -> None:
    pairs = len(campaign.cycle(campaign.prepare(tmp_path / "pairs")))
    tally = campaign.run(SEED, count=pairs * ROUNDS, workers=2, probe_seconds=3.0,
                         directory=tmp_path)
    # Every mutation kind and every read path was exercised, and compared somewhere.
    assert set(tally.kinds) == set(layout.KINDS)
    assert set(tally.by_path) == set(probes.PATHS)
    assert all(counts["ok"] > 0 for counts in tally.by_path.values()), tally.by_path
    assert not tally.failures, tally.report()


@pytest.fixture(scope="module")
def zlib_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return corpus.build(tmp_path_factory.mktemp("bases"), ("zlib",))["zlib"]


def _job(number: int, base: Path, mutant: Path | None = None, **extra: object) -> Job:
    return Job(number, {"base": "zlib", "pristine": str(base), "mutant": str(mutant or base),
                        "oracle": True, **extra})


def test_pool_catches_crashes_and_hangs_and_goes_on(zlib_base: Path, tmp_path: Path) -> None:
    results: list[Result] = []
    jobs = [Job(1, {"test": "crash"}), Job(2, {"test": "hang"}), _job(3, zlib_base)]
    pool = Pool(1, tmp_path, probe_seconds=2.0)
    try:
        pool.run(iter(jobs), lambda result: results.append(result) or [])
    finally:
        pool.close()
    by_number = {result.job.number: result for result in results}
    assert by_number[1].failure == "crash" and "SIGABRT" in by_number[1].detail
    assert by_number[2].failure == "hang" and by_number[2].at == "hs:0"
    verdicts = by_number[3].verdicts
    assert verdicts and {entry["v"] for entry in verdicts} == {"ok"}, verdicts
    assert pool.started == 3  # a fresh worker after each failure


def test_values_are_compared_with_h5py_not_the_undamaged_file(zlib_base: Path,
                                                              tmp_path: Path) -> None:
    """A chunk rewritten with other, valid data: both libraries read the new values, and
    every read is ``ok`` (the undamaged file is only a fallback oracle)."""
    import h5py

    mutant = tmp_path / "mutant.h5"
    mutant.write_bytes(zlib_base.read_bytes())
    with h5py.File(mutant, "r+") as f:
        f["g/plane"][0, 0] = 12345
    results: list[Result] = []
    pool = Pool(1, tmp_path)
    try:
        pool.run(iter([_job(1, zlib_base, mutant)]), lambda r: results.append(r) or [])
    finally:
        pool.close()
    verdicts = {entry["v"] for entry in results[0].verdicts or []}
    assert verdicts == {"ok"}, results[0].verdicts


class Boom(Exception):
    pass


@pytest.mark.parametrize(("hs", "h5", "pristine", "expected"), [
    (np.array([1.0, np.nan]), np.array([1.0, np.nan]), MISSING, "ok"),
    (np.array([1.0, 2.0]), np.array([1.0, 3.0]), np.array([1.0, 3.0]), "wrong"),
    (np.array([1.0, 2.0]), OSError("filter failed"), np.array([1.0, 2.0]), "ok-pristine"),
    (np.array([1.0, 9.0]), OSError("filter failed"), np.array([1.0, 2.0]), "wrong-silent"),
    (errors.HDF5ExtError("bad"), np.array([1, 2]), np.array([1, 2]), "refusal"),
    (errors.HDF5ExtError("bad"), np.array([1, 0]), np.array([1, 2]), "refusal-damaged"),
    (errors.HDF5ExtError("bad"), OSError("bad"), np.array([1, 2]), "ok-error"),
    (RecursionError("deep"), OSError("bad"), np.array([1, 2]), "unexpected"),
    (ValueError("raw"), OSError("bad"), np.array([1, 2]), "unexpected"),
    (np.array([b"a\0x"]), np.array([b"a"]), MISSING, "ok"),
])
def test_judge(hs: object, h5: object, pristine: object, expected: str) -> None:
    assert judge("read", hs, h5, pristine) == expected


def test_allowed_exceptions() -> None:
    assert allowed(errors.NoSuchNodeError("x"), "walk", None)
    assert allowed(MemoryError(), "slice", None)
    assert allowed(OSError("x"), "open", None) and not allowed(OSError("x"), "read", None)
    assert allowed(IndexError("x"), "item", IndexError("y"))
    assert not allowed(IndexError("x"), "item", np.zeros(3))
    assert not allowed(Boom(), "read", None)
    assert not allowed(UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad"), "attrs", None)


def test_mutations_replay_from_their_spec() -> None:
    original = bytes(range(256)) * 4
    regions = [layout.Region("chunk_data", 100, 200, "somewhere")]
    first = draw(np.random.default_rng([7, 3]), "zlib", "chunk_data", regions, original)
    again = draw(np.random.default_rng([7, 3]), "zlib", "chunk_data", regions, original)
    assert first == again
    assert all(100 <= offset < 200 for offset, _ in first.edits)
    assert parse_spec("zlib", first.spec).edits == first.edits
    cut = Mutation("zlib", "truncate", "file", truncate=10)
    assert parse_spec("zlib", cut.spec).truncate == 10


def test_bases_have_the_same_layout_and_data_from_build_to_build(tmp_path: Path) -> None:
    """Replays rebuild the base, so the edits must land on the same bytes: same sizes,
    same regions, same chunks and headers (index datasets' object headers keep the times
    PyTables' and hyperslab's index writers put there, and freed space its old bytes)."""
    one = corpus.build(tmp_path / "one")
    two = corpus.build(tmp_path / "two")
    assert sorted(one) == sorted(two) == sorted(corpus.BASES_BY_NAME)
    stable = {"chunk_data", "index_data", "blosc2_frame_header", "blosc2_chunk_header",
              "b2nd_meta", "extent", "superblock"}
    for name in one:
        first, second = one[name].read_bytes(), two[name].read_bytes()
        regions = layout.regions_of(one[name])
        assert regions == layout.regions_of(two[name]), name
        for region in regions:
            if region.kind in stable:
                assert first[region.start:region.stop] == second[region.start:region.stop], (
                    name, region)


def test_attribute_names_that_are_not_utf8_compare_as_both_libraries_list_them(
        zlib_base: Path, tmp_path: Path) -> None:
    """A damaged name: h5py lists its bytes, hyperslab the same bytes as text with
    surrogate escapes (and a warning); the oracle compares them, not the mixed sort."""
    import h5py

    mutant = tmp_path / "mutant.h5"
    parse_spec("zlib", "882:f60fc5ff").apply(zlib_base.read_bytes(), mutant)
    with h5py.File(mutant, "r") as h5:
        assert b"CL\xf6\x0f\xc5" in h5.attrs.keys()  # the damaged CLASS
        theirs = probes._attrs_h5(h5, "/")
    with hyperslab.open_file(mutant) as f, pytest.warns(errors.DataTypeWarning):
        ours = probes._attrs_hs(f, "/")
    assert "CL\udcf6\x0f\udcc5" in ours[0]
    assert judge("attrs", ours, theirs) == "ok"


def test_open_opens_the_root_group_in_h5py_too(tmp_path: Path) -> None:
    """h5py.File does not read the root group's object header: a file whose root group
    cannot be opened "opens" in h5py, though nothing in it reads.  The oracle's open
    opens the root group too, as ``open_file`` does."""
    base = corpus.build(tmp_path / "bases", ("b2nd",))["b2nd"]
    mutant = tmp_path / "mutant.h5"
    parse_spec("b2nd", "797:7cbf11eb70").apply(base.read_bytes(), mutant)
    outcomes, _ = worker.Reader(None).read_h5(None, mutant, [])
    assert isinstance(outcomes[0], KeyError), outcomes
    with pytest.raises(errors.HDF5ExtError, match="root group"):
        hyperslab.open_file(mutant)
