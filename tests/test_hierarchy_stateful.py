"""A stateful machine: random create/rename/move/remove/reopen checked against a model."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

import hyperslab

NAMES = st.sampled_from(["a", "b", "c", "d"])


class Hierarchy(RuleBasedStateMachine):
    """The model maps every path to 'group' or the array value stored there."""

    def __init__(self) -> None:
        super().__init__()
        self.dir = tempfile.TemporaryDirectory()
        self.path = Path(self.dir.name) / "h.h5"
        self.file = hyperslab.open_file(self.path, "w", node_cache_slots=3)
        self.model: dict[str, object] = {"/": "group"}
        self.held: dict[str, hyperslab.Node] = {}
        self.counter = 0

    def teardown(self) -> None:
        self.file.close()
        self.dir.cleanup()

    def _groups(self) -> list[str]:
        return sorted(p for p, v in self.model.items() if v == "group")

    def _children(self, parent: str) -> list[str]:
        prefix = parent.rstrip("/") + "/"
        return [p for p in self.model if p.startswith(prefix) and "/" not in p[len(prefix):]]

    def _join(self, parent: str, name: str) -> str:
        return parent.rstrip("/") + "/" + name

    @rule(data=st.data(), name=NAMES, is_group=st.booleans())
    def create(self, data: st.DataObject, name: str, is_group: bool) -> None:
        parent = data.draw(st.sampled_from(self._groups()))
        path = self._join(parent, name)
        if path in self.model:
            return
        if is_group:
            self.file.create_group(parent, name)
            self.model[path] = "group"
        else:
            self.counter += 1
            self.file.create_array(parent, name, np.array([self.counter]))
            self.model[path] = self.counter
        self.held[path] = self.file.get_node(path)

    @precondition(lambda self: len(self.model) > 1)
    @rule(data=st.data(), newname=NAMES)
    def move(self, data: st.DataObject, newname: str) -> None:
        src = data.draw(st.sampled_from(sorted(p for p in self.model if p != "/")))
        dst_parent = data.draw(st.sampled_from(self._groups()))
        dst = self._join(dst_parent, newname)
        if dst in self.model or dst_parent == src or dst_parent.startswith(src + "/"):
            return
        self.file.move_node(src, dst_parent, newname)
        moved = {p: v for p, v in self.model.items() if p == src or p.startswith(src + "/")}
        for p in moved:
            del self.model[p]
            self.model[dst + p[len(src):]] = moved[p]
            if p in self.held:
                self.held[dst + p[len(src):]] = self.held.pop(p)

    @precondition(lambda self: len(self.model) > 1)
    @rule(data=st.data())
    def remove(self, data: st.DataObject) -> None:
        path = data.draw(st.sampled_from(sorted(p for p in self.model if p != "/")))
        self.file.remove_node(path, recursive=True)
        for p in [p for p in self.model if p == path or p.startswith(path + "/")]:
            del self.model[p]
            node = self.held.pop(p, None)
            assert node is None or not node._v_isopen

    @rule()
    def reopen(self) -> None:
        self.file.close()
        self.file = hyperslab.open_file(self.path, "a", node_cache_slots=3)
        self.held.clear()

    @invariant()
    def tree_matches_model(self) -> None:
        walked = {n._v_pathname: n for n in self.file}
        assert set(walked) == set(self.model)
        for path, value in self.model.items():
            node = walked[path]
            if value == "group":
                assert isinstance(node, hyperslab.Group)
            else:
                assert node[0] == value
        for path, node in self.held.items():
            assert node._v_pathname == path and node._v_isopen
            assert self.file.get_node(path) is node


TestHierarchy = Hierarchy.TestCase
TestHierarchy.settings = settings(max_examples=30, stateful_step_count=15, deadline=None)
