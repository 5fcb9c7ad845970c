"""Runs DLIO (dlio_benchmark.main) with object keys MinIO accepts.

DLIO's s3torchconnector storage (dlio_benchmark/storage/s3_torch_storage.py)
names each object by its whole URI: the key of s3://BUCKET/DIR/FILE is the
string "s3://BUCKET/DIR/FILE". MinIO refuses such a key ("Object name
contains unsupported characters": it holds "//"), so DLIO cannot write or
read a dataset there. This keeps DLIO's code and its calls to
s3torchconnector, and only names the object DIR/FILE, as the URI means: one
PUT per file written, one GET of the whole object per file read, one
listing of the data folder, as DLIO does them. DLIO's data loader workers
are forked (its default multiprocessing context), so they inherit the
change.

Usage: python dlio-s3-keys.py DLIO_ARGS... (the arguments of dlio_benchmark)
"""
from urllib.parse import urlparse

from dlio_benchmark.storage import s3_torch_storage


def _split(uri):
    u = urlparse(uri)
    if u.scheme != "s3":
        raise ValueError(f"Unsupported URI scheme: {u.scheme}")
    return u.netloc, u.path.lstrip("/")


def put_data(self, id, data, offset=None, length=None):
    bucket, key = _split(id)
    writer = self.s3_client.put_object(bucket, key)
    writer.write(data)
    writer.close()


def get_data(self, id, data, offset=None, length=None):
    bucket, key = _split(id)
    if offset is not None or length is not None:
        raise ValueError("ranged reads are not used by DLIO's NPZ/NPY S3 readers")
    return self.s3_client.get_object(bucket, key).read()


def list_objects(self, bucket_name, prefix=None):
    p = (prefix or "").strip("/")
    p = p + "/" if p else ""
    names = []
    for result in self.s3_client.list_objects(bucket_name, p):
        for info in result.object_info:
            names.append(info.key[len(p):])
    return names


cls = s3_torch_storage.S3PyTorchConnectorStorage
cls.put_data, cls.get_data, cls.list_objects = put_data, get_data, list_objects

if __name__ == "__main__":
    from dlio_benchmark.main import main

    main()
