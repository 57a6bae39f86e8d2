"""Hardware presets and Cluster validation."""

import pytest

from core.hardware import GPU_PRESETS, LINK_PRESETS, Cluster, gpu, link, make_cluster


def test_required_presets_exist_with_sources():
    for name in ["A100 40GB", "A100 80GB", "H100 SXM", "H200", "B200", "MI300X"]:
        assert GPU_PRESETS[name].source
    for name in [
        "NVLink 3",
        "NVLink 4",
        "NVLink 5",
        "PCIe 4 x16",
        "PCIe 5 x16",
        "InfiniBand HDR",
        "InfiniBand NDR",
        "InfiniBand XDR",
        "100 GbE",
        "400 GbE",
    ]:
        assert LINK_PRESETS[name].source


def test_nvlink_is_per_direction_half_the_marketing_figure():
    # NVIDIA quotes 600 / 900 / 1,800 GB/s bidirectional for NVLink 3 / 4 / 5.
    assert link("NVLink 3").bandwidth_bytes_per_s * 2 == 600e9
    assert link("NVLink 4").bandwidth_bytes_per_s * 2 == 900e9
    assert link("NVLink 5").bandwidth_bytes_per_s * 2 == 1800e9


def test_nic_line_rates_divide_by_eight():
    assert link("InfiniBand NDR").bandwidth_bytes_per_s == 400e9 / 8
    assert link("InfiniBand HDR").bandwidth_bytes_per_s == 200e9 / 8
    assert link("100 GbE").bandwidth_bytes_per_s == 100e9 / 8


def test_dense_bf16_is_half_the_sparse_datasheet_figure():
    assert gpu("H100 SXM").bf16_flops_per_s == pytest.approx(1979e12 / 2, rel=1e-3)
    assert gpu("A100 80GB").bf16_flops_per_s == 624e12 / 2


def test_cluster_derived_values():
    c = make_cluster(num_nodes=8, gpus_per_node=8)
    assert c.num_gpus == 64
    assert c.node_injection_bytes_per_s == 8 * 50e9
    assert c.inter_bandwidth_per_gpu_bytes_per_s == 50e9
    assert c.node_of(9) == 1
    one_nic = make_cluster(
        num_nodes=2,
        gpus_per_node=8,
        gpu_name="A100 80GB",
        inter_link_name="InfiniBand HDR",
        nics_per_node=1,
    )
    assert one_nic.intra_link.name == "NVLink 3"
    assert one_nic.inter_bandwidth_per_gpu_bytes_per_s == 25e9 / 8


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(num_nodes=0), "num_nodes=0 must be a whole number"),
        (dict(num_nodes=2, gpus_per_node=128), "exceeds 72"),
        (dict(num_nodes=2, gpus_per_node=4, nics_per_node=8), "at most one NIC per GPU"),
        (dict(num_nodes=2, gpu_name="TPU"), "GPU='TPU' is unknown: use one of"),
    ],
)
def test_cluster_errors_state_the_rule(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_cluster(**kwargs)


def test_rank_outside_cluster():
    with pytest.raises(ValueError, match="outside 0..15"):
        make_cluster(num_nodes=2).node_of(16)
    with pytest.raises(ValueError, match="whole number"):
        Cluster(
            num_nodes=1.5,
            gpus_per_node=8,
            gpu=gpu("H100 SXM"),
            intra_link=link("NVLink 4"),
            inter_link=link("InfiniBand NDR"),
            nics_per_node=8,
        )


def test_cluster_counts_are_whole_numbers_stored_as_ints():
    c = Cluster(
        num_nodes=2.0,
        gpus_per_node=8,
        gpu=gpu("H100 SXM"),
        intra_link=link("NVLink 4"),
        inter_link=link("InfiniBand NDR"),
        nics_per_node=8.0,
    )
    assert (c.num_nodes, c.nics_per_node) == (2, 8)
    assert type(c.num_nodes) is int and type(c.nics_per_node) is int
    with pytest.raises(ValueError, match="link='Token Ring' is unknown: use one of"):
        link("Token Ring")


def test_scale_out_links_are_the_nics_between_nodes():
    from core.hardware import SCALE_OUT_LINKS

    assert SCALE_OUT_LINKS == (
        "InfiniBand HDR",
        "InfiniBand NDR",
        "InfiniBand XDR",
        "100 GbE",
        "400 GbE",
    )
    assert not any(s in n for n in SCALE_OUT_LINKS for s in ("NVLink", "PCIe", "Infinity Fabric"))


@pytest.mark.parametrize(
    "name, mib",
    [
        ("A100 40GB", 40_960),
        ("A100 80GB", 81_920),
        ("H100 SXM", 81_559),
        ("H100 PCIe", 81_559),
        ("H200", 143_771),
        ("B200", 183_359),
        ("GB200", 189_471),
        ("MI300X", 196_288),
    ],
)
def test_capacities_are_what_the_devices_report(name, mib):
    """nvidia-smi's "Total" in MiB (rocm-smi's bytes for MI300X), not the datasheet's 80e9."""
    assert gpu(name).hbm_bytes == mib * 2**20


def test_an_80_gb_h100_is_79_6_gib_and_85_5_gb():
    h100 = gpu("H100 SXM").hbm_bytes
    assert h100 / 2**30 == pytest.approx(79.647, abs=1e-3)  # not the 74.5 GiB of 80e9 B
    assert h100 / 1e9 == pytest.approx(85.52, abs=1e-2)
    assert gpu("MI300X").hbm_bytes == 205_822_885_888  # rocm-smi "VRAM Total Memory (B)"
