"""The Python Kubernetes client against a loopback API server, driven by python.spec.ts.

Every object goes through the client's typed models (V1Pod, V1Namespace, ...), which refuse
objects that lack a field the API's OpenAPI requires. Output is JSON, one document per line.

  listAndWatch.py KUBECONFIG list
      lists pods in every namespace and the namespaces; prints one summary
  listAndWatch.py KUBECONFIG watch NAMESPACE RESOURCE_VERSION LAST_NAME
      watches pods in NAMESPACE from RESOURCE_VERSION with bookmarks (watch.Watch().stream, which
      sends watch=True); prints each event, and stops once LAST_NAME was DELETED and a BOOKMARK came
"""
import json
import sys

from kubernetes import client, config, watch


def main(kubeconfig, mode, *args):
    config.load_kube_config(config_file=kubeconfig)
    core = client.CoreV1Api()
    if mode == 'list':
        pods = core.list_pod_for_all_namespaces()
        namespaces = core.list_namespace()
        print(json.dumps({
            'resourceVersion': pods.metadata.resource_version,
            'model': type(pods).__name__,
            'pods': [{
                'model': type(pod).__name__,
                'namespace': pod.metadata.namespace,
                'name': pod.metadata.name,
                'phase': pod.status.phase,
                'images': [status.image for status in pod.status.container_statuses or []],
                'imageIDs': [status.image_id for status in pod.status.container_statuses or []],
            } for pod in pods.items],
            'namespaces': [{'model': type(ns).__name__, 'name': ns.metadata.name, 'phase': ns.status.phase} for ns in namespaces.items],
        }), flush=True)
        return
    if mode == 'watch':
        namespace, resource_version, last_name = args
        stream = watch.Watch()
        deleted_last = False
        bookmarks = 0
        for event in stream.stream(core.list_namespaced_pod, namespace, resource_version=resource_version,
                                   allow_watch_bookmarks=True, timeout_seconds=30):
            raw = event['raw_object']
            print(json.dumps({
                'type': event['type'],
                'model': type(event['object']).__name__,
                'name': raw['metadata'].get('name'),
                'resourceVersion': raw['metadata'].get('resourceVersion'),
            }), flush=True)
            if event['type'] == 'BOOKMARK':
                bookmarks += 1
            if event['type'] == 'DELETED' and raw['metadata'].get('name') == last_name:
                deleted_last = True
            if deleted_last and bookmarks > 0:
                stream.stop()
        return
    raise SystemExit('unknown mode: ' + mode)


if __name__ == '__main__':
    main(*sys.argv[1:])
