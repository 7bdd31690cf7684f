"""What every node is: Node, Group, AttributeSet, path names and PyTables' plain spellings.

These are the pieces of the hierarchy that do not depend on what a leaf holds.  The file
that owns the nodes is seen through the :class:`~hyperslab.nodes.tree.owner.NodeOwner`
protocol, so this subpackage imports nothing from the other subpackages of
:mod:`hyperslab.nodes` but :mod:`~hyperslab.nodes.atoms` and
:mod:`~hyperslab.nodes.members`; below the nodes layer it uses storage and codecs.
"""
