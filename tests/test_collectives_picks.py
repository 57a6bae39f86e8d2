"""core.collectives.picks: the clusters a two-level all-reduce curve is drawn on."""

from core.collectives import cluster_of
from core.hardware import make_cluster


def test_whole_nodes_keep_the_node_type():
    base = make_cluster(num_nodes=2, gpus_per_node=8)
    big = cluster_of(base, 64)
    assert (big.num_nodes, big.gpus_per_node, big.num_gpus) == (8, 8, 64)
    assert (big.gpu, big.intra_link, big.inter_link) == (base.gpu, base.intra_link, base.inter_link)
    assert cluster_of(base, 8).num_nodes == 1


def test_a_partial_node_has_no_cluster():
    base = make_cluster(num_nodes=2, gpus_per_node=8)
    assert cluster_of(base, 4) is None  # half a node
    assert cluster_of(base, 12) is None  # one and a half nodes
    assert cluster_of(make_cluster(num_nodes=1, gpus_per_node=4), 12).num_nodes == 3
