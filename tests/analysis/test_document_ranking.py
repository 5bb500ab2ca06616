"""The evidence list's order: a document's best passage by words and by meaning, its reach
over the requirement's control families, and how much more it is about this requirement
than about the others in scope."""

from __future__ import annotations

import numpy as np

from workers.analysis.document_ranking import FEATURES, WEIGHTS, DocumentRanking, Signals

# Passages of three documents, interleaved as an index may hold them.
DOCUMENTS = ["policy", "procedure", "policy", "memo", "procedure", "policy"]
FAR = 200  # a family the passage ranks among the catalogue's last


def _signals(
    lexical: list[float], dense: list[float], ranks: list[list[int]] | None = None
) -> Signals:
    ranked = np.array(ranks if ranks is not None else [[FAR, FAR]] * len(lexical), dtype=np.int16)
    return Signals(np.array(lexical), np.array(dense), ranked, ranked)


def test_reach_is_each_documents_best_closeness_per_family_averaged() -> None:
    ranking = DocumentRanking(DOCUMENTS)
    # Family A then family B, per passage; 1 is the passage's closest family.
    ranks = [[1, FAR], [1, FAR], [FAR, 1], [3, 3], [FAR, FAR], [FAR, FAR]]
    closeness = _signals([0] * 6, [0] * 6, ranks).closeness()
    reach = dict(zip(ranking.documents, ranking.reach(closeness), strict=True))

    # The policy's first passage is closest to A, its second to B: both families reached.
    both_first = 2 / np.log2(2)  # rank 1 both ways
    assert np.isclose(reach["policy"], both_first)
    assert np.isclose(reach["procedure"], (both_first + 2 / np.log2(1 + FAR)) / 2)
    assert np.isclose(reach["memo"], 2 / np.log2(4))  # third closest to both
    assert reach["policy"] > reach["procedure"] > reach["memo"]


def test_a_document_reaching_every_family_passes_one_matching_a_single_family() -> None:
    ranking = DocumentRanking(DOCUMENTS)
    # The procedure's best passage matches the words best; the policy addresses both families.
    lexical = [0.6, 0.8, 0.5, 0.1, 0.2, 0.4]
    dense = [0.6, 0.7, 0.6, 0.1, 0.3, 0.5]
    words_only = _signals(lexical, dense)
    assert ranking.order(words_only)[0] == "procedure"

    ranks = [[1, FAR], [2, FAR], [FAR, 1], [FAR, FAR], [FAR, FAR], [FAR, 2]]
    assert ranking.order(_signals(lexical, dense, ranks))[0] == "policy"


def test_a_document_about_everything_is_measured_against_itself() -> None:
    # The memo scores second for every requirement; the procedure only for this one.
    ranking = DocumentRanking(["memo", "procedure", "other"])
    references = [
        _signals([0.9, 0.0, 1.0], [0.9, 0.0, 1.0]),
        _signals([0.9, 0.0, 1.0], [0.9, 0.0, 1.0]),
        _signals([0.9, 1.0, 0.0], [0.9, 1.0, 0.0]),
    ]
    asked = _signals([0.9, 0.85, 1.0], [0.9, 0.85, 1.0])
    assert ranking.order(asked)[:2] == ["other", "memo"]
    ranking.calibrate(references)
    assert ranking.order(asked).index("procedure") < ranking.order(asked).index("memo")


def test_the_score_is_the_features_weighted_sum_before_and_after_calibration() -> None:
    # What bench.evidence_combiner fits is what the list ranks by.
    ranking = DocumentRanking(DOCUMENTS)
    ranks = [[1, FAR], [2, FAR], [FAR, 1], [3, 3], [FAR, FAR], [FAR, 2]]
    asked = _signals([0.6, 0.8, 0.5, 0.1, 0.2, 0.4], [0.6, 0.7, 0.6, 0.1, 0.3, 0.5], ranks)
    before = ranking.features(asked)
    assert before.shape == (3, len(FEATURES))
    assert np.allclose(before[:, FEATURES.index("self")], 0.0)  # nothing to stand against
    assert np.allclose(before @ np.array(WEIGHTS), ranking.scores(asked))

    ranking.calibrate(
        [
            _signals([0.9, 0.0, 0.1, 0.0, 0.0, 0.9], [0.9, 0.0, 0.1, 0.0, 0.0, 0.9]),
            _signals([0.1, 0.9, 0.1, 0.5, 0.9, 0.1], [0.1, 0.9, 0.1, 0.5, 0.9, 0.1]),
        ]
    )
    after = ranking.features(asked)
    assert not np.allclose(after[:, FEATURES.index("self")], 0.0)
    assert np.allclose(after @ np.array(WEIGHTS), ranking.scores(asked))
    assert np.allclose(after[:, :3], before[:, :3])  # only the standing moved
