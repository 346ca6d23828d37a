"""``kb.session``: the settings a session starts with. A local job reading files whole
(``spark.read_events``) gets driver memory for its largest file per task (a 47 MB file read
by two tasks at once failed in 1 GiB, `docs/decisions.md` 68); the user's ``--spark-conf``
wins; other masters are left to the cluster's settings."""

from __future__ import annotations

from spaseq.engine.kb.session import local_tasks, session_conf, whole_file_memory

MB = 1_000_000


def test_local_tasks_reads_the_master() -> None:
    assert [local_tasks(m) for m in ("local", "local[1]", "local[3]", "local[4,2]")] == [1, 1, 3, 4]
    assert local_tasks("local[*]") >= 1


def test_files_read_whole_get_driver_memory_for_each_task() -> None:
    assert whole_file_memory(1000, 2) == "1024m"  # Spark's default is enough
    assert whole_file_memory(47 * MB, 2) == f"{((1 << 30) + 8 * 47 * MB * 2) >> 20}m"
    assert int(whole_file_memory(47 * MB, 4)[:-1]) > int(whole_file_memory(47 * MB, 2)[:-1])
    assert session_conf("local[2]", {}, 400 * MB, "t", largest_file=47 * MB)["spark.driver.memory"] == \
        whole_file_memory(47 * MB, 2)
    assert session_conf("local[2]", {"spark.driver.memory": "8g"}, None, "t",
                        largest_file=47 * MB)["spark.driver.memory"] == "8g"
    assert "spark.driver.memory" not in session_conf("spark://h:7077", {}, None, "t", largest_file=47 * MB)
    assert "spark.driver.memory" not in session_conf("local[2]", {}, None, "t")


def test_a_cluster_job_shuffles_into_a_partition_per_64_mib_and_at_least_one_per_core() -> None:
    from spaseq.engine.kb.session import cluster_shuffle_partitions

    assert cluster_shuffle_partitions(80_000, 1) == 1
    assert cluster_shuffle_partitions(80_000, 4) == 4
    assert cluster_shuffle_partitions(380 * MB, 2) == 6
    assert cluster_shuffle_partitions(None, 3) == 6
