"""deploy/compose.yaml and deploy/k8s/splitlab.yaml validate with the tools' own schemas, and say
what a Streamlit deployment needs: sticky sessions, the WebSocket kept open, one shared cookie
secret, the health probe, one core per replica (docs/deploy.md)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import jsonschema
import kubernetes_validate
import pytest
import yaml

from tests.registry import ROOT

DEPLOY = ROOT / "deploy"
HEALTH = "/_stcore/health"


def _dockerfile_port() -> int:
    return int(re.search(r"^EXPOSE (\d+)", (ROOT / "Dockerfile").read_text(), re.M).group(1))


@pytest.fixture(scope="module")
def k8s() -> dict[str, dict]:
    docs = [d for d in yaml.safe_load_all((DEPLOY / "k8s" / "splitlab.yaml").read_text()) if d]
    return {d["kind"]: d for d in docs}


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def test_every_kubernetes_resource_validates_strictly(k8s):
    assert set(k8s) == {"Deployment", "Service", "Ingress", "PodDisruptionBudget"}
    for doc in k8s.values():
        kubernetes_validate.validate(doc, "1.37.0", strict=True)  # raises on any error


def test_kubernetes_validation_rejects_a_broken_manifest(k8s):
    broken = json.loads(json.dumps(k8s["Deployment"]))
    broken["spec"]["replicas"] = "four"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, "1.37.0", strict=True)


def test_kubernetes_pods_serve_streamlit_with_one_core_and_the_shared_secret(k8s):
    pod = k8s["Deployment"]["spec"]["template"]["spec"]
    (app,) = pod["containers"]
    assert app["ports"][0]["containerPort"] == _dockerfile_port()
    assert app["readinessProbe"]["httpGet"]["path"] == HEALTH
    assert app["livenessProbe"]["httpGet"]["path"] == HEALTH
    # One Streamlit process runs Python under one GIL: a replica is worth one core.
    assert app["resources"]["requests"]["cpu"] == app["resources"]["limits"]["cpu"] == "1"
    (env,) = [e for e in app["env"] if e["name"] == "STREAMLIT_SERVER_COOKIE_SECRET"]
    assert "secretKeyRef" in env["valueFrom"]  # one secret for every replica, never inline
    assert pod["securityContext"]["runAsUser"] == 10001  # the Dockerfile's unprivileged user
    assert "useradd --create-home --uid 10001" in (ROOT / "Dockerfile").read_text()


def test_kubernetes_ingress_is_sticky_and_keeps_websockets_open(k8s):
    notes = k8s["Ingress"]["metadata"]["annotations"]
    assert notes["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    assert int(notes["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600
    assert notes["nginx.ingress.kubernetes.io/proxy-body-size"] == "26m"
    service = k8s["Service"]["spec"]
    assert service["sessionAffinity"] == "ClientIP"
    backend = k8s["Ingress"]["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] == k8s["Service"]["metadata"]["name"]
    labels = k8s["Deployment"]["spec"]["template"]["metadata"]["labels"]
    assert service["selector"].items() <= labels.items()


def test_compose_file_validates_against_the_compose_schema(compose):
    schema = json.loads((ROOT / "tests" / "data" / "compose_spec.json").read_text())
    jsonschema.Draft201909Validator(schema).validate(compose)
    broken = json.loads(json.dumps(compose))
    broken["services"]["app"]["deploy"]["replicas"] = "two"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft201909Validator(schema).validate(broken)


def test_compose_runs_replicas_behind_a_sticky_proxy(compose):
    app, proxy = compose["services"]["app"], compose["services"]["proxy"]
    assert app["expose"] == [str(_dockerfile_port())]
    assert "STREAMLIT_SERVER_COOKIE_SECRET" in app["environment"]
    assert HEALTH in " ".join(app["healthcheck"]["test"])
    assert app["deploy"]["resources"]["limits"]["cpus"] == "1.0"
    mount = proxy["volumes"][0].split(":")
    assert (DEPLOY / mount[0]).is_file() and mount[1] == "/etc/nginx/nginx.conf"
    conf = (DEPLOY / mount[0]).read_text()
    assert "hash $sid consistent" in conf and "proxy_read_timeout 86400s" in conf
    assert re.search(rf"server app:{_dockerfile_port()}\b", conf)


def test_compose_nginx_config_passes_nginx_own_check(tmp_path):
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.path.exists(nginx):
        if os.environ.get("CI"):
            pytest.fail("nginx is missing: apt-get install -y nginx")
        pytest.skip("nginx is not installed")
    # `app` resolves only inside the compose network; check the rest with a loopback address.
    conf = (DEPLOY / "nginx.compose.conf").read_text().replace("app:8501", "127.0.0.1:8501")
    conf = conf.replace("events {", f"pid {tmp_path}/nginx.pid;\nevents {{", 1)
    (tmp_path / "nginx.conf").write_text(conf)
    done = subprocess.run(
        [
            nginx,
            "-t",
            "-p",
            str(tmp_path),
            "-e",
            str(tmp_path / "error.log"),
            "-c",
            str(tmp_path / "nginx.conf"),
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
