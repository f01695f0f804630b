# ruff: noqa: E501 -- Korean glyphs count double width; its sentences read better unbroken.
"""The report's fixed Korean strings (the same keys as `strings_en`) and the Korean
wording of the metric definitions."""

KO: dict[str, str] = {
    "question": "질문",
    "rendered": "{source}의 결과로 {when}에 만들었습니다.",
    "status_complete": "완료: 계획한 {n}개 조합이 모두 끝까지 돌았습니다.",
    "status_complete_one": "완료: 계획한 조합 하나가 끝까지 돌았습니다.",
    "status_finished_provisional": (
        "계획한 조합 {n}개는 모두 끝까지 돌았지만, {factors} 판정은 아직 잠정입니다. 이유는 각 "
        "절에 적었습니다."
    ),
    "headline_none": "판정 없음: 완료된 계획 조합이 아직 없습니다",
    "status_provisional": (
        "잠정: 계획한 {n}개 조합 중 {k}개가 완주하지 못했습니다({points}). 그 조합에 기대는 "
        "판정은 잠정으로 표시했고, 결론이 아닙니다."
    ),
    "sec_compared": "먼저, 무엇을 무엇과 비교하는지",
    "basis_note": (
        '"단위당 초"에는 늘 기준을 붙였습니다. **처리량 기준**: 벽시계 시간 / 완료한 단위 수로, '
        "여러 단위를 한꺼번에 돌릴 때의 비용입니다. 환산은 이 기준을 씁니다. **슬롯 지연 기준**: "
        "슬롯 하나가 단위 하나를 끝내는 데 걸린 시간으로, 처리량 기준의 대략 슬롯 수배입니다. 두 기준의 "
        "숫자를 서로 비교하지 않습니다."
    ),
    "objective_note": (
        "판정은 **{objective_with_ro}** 합니다(연구의 목표, 낮을수록 좋음){slo}. decode와 prefill "
        "처리량은 설명으로 곁에 둡니다."
    ),
    "objective_slo": ". 권장 조합은 {limits}도 지켜야 합니다",
    "model_line": "모델: {name} ({arch}, {params}, {quant}{size}).",
    "model_params": "전체 {total}B, 활성 {active}B 파라미터",
    "synthetic_note": "benchkit이 직접 만든 무작위 가중치 합성 모델이라, 그 속도는 실제 모델에 대해 아무것도 말해 주지 않습니다",
    "hardware_line": "하드웨어: {name}{desc}{power}.",
    "gpu_reported": "기기가 스스로 보고한 정보({source}): {gpus}.",
    "power_cap": ", 전력캡 {w}W",
    "compare_warning": (
        "이 숫자는 이 모델과 이 하드웨어에서만 성립합니다. 다른 모델이나 다른 카드에서 잰 숫자와 직접 "
        "비교하면 안 됩니다. 같은 카드라도 비슷한 크기의 MoE와 dense 모델은 속도가 완전히 다릅니다."
    ),
    "sec_workload": "워크로드와 샘플링",
    "workload_line": (
        "워크로드 {fixture}: {units}개 단위, {calls}번 호출, 프롬프트 {prompt} 토큰(호출당 평균 "
        "{mean_prompt}, 최대 {max_prompt}), 생성 {completion} 토큰. 출력 정책 {policy}, 호출당 생성 "
        "상한 {cap} 토큰."
    ),
    "workload_subset": (
        "이 중 앞의 {n}개 단위만 재생했습니다(workload.units={n}). 위의 합계는 픽스처 전체의 "
        "값입니다."
    ),
    "sampling_sent": "샘플링 {profile}: 보낸 값 {fields}.",
    "sampling_unsent": "샘플링 {profile}: 샘플링 값을 보내지 않아 서버 기본값이 적용됐습니다{defaults}.",
    "sampling_mixed": "작업마다 샘플링이 다릅니다: {profiles}.",
    "sec_setup": "세팅",
    "builds_title": "llama-server 빌드:",
    "build_date": "; 소스 날짜 {date}",
    "flags_title": (
        "llama-server에 넘긴 모든 플래그입니다(경로는 파일 이름만 남겼고, 전체 경로와 환경 변수는 각 "
        "작업의 result.json에 있습니다). 모든 작업에 공통:"
    ),
    "flags_per_job": "공통 플래그(설정 절) 외에 작업마다 더한 플래그입니다. 다른 작업만 한 줄씩 적었습니다:",
    "sec_flags_appendix": "부록: 작업별 플래그",
    "sec_backend": "백엔드",
    "sec_slots": "동시 슬롯",
    "sec_mtp": "MTP(투기적 디코딩)",
    "sec_spec": "투기적 디코딩({value}) 켬/끔 비교",
    "sec_build": "빌드 비교",
    "sec_repeats": "반복 측정과 노이즈",
    "sec_projection": "환산",
    "tokenizer_mismatch": "작업 {job}: 픽스처에는 프롬프트 토큰이 {fixture}개로 기록돼 있지만 서버는 {server}개로 셌습니다 (완료된 호출 {calls}개 중 {n}개가 다름: 픽스처를 기록할 때와 다른 토크나이저나 채팅 템플릿).",
    "sec_roofline": "디코드 루프라인",
    "roofline_intro": "한 시퀀스의 디코드는 토큰마다 활성 가중치를 한 번씩 읽으므로, 메모리 대역폭 / (활성 파라미터 x 가중치당 바이트)가 단일 스트림 디코드의 상한입니다. 가중치당 바이트는 모델 파일 크기를 파라미터 수로 나눈 값이며, 비율은 서버 자신의 시퀀스당 디코드 속도를 이 상한과 비교합니다.",
    "col_bpw": "가중치당 비트",
    "col_gb_token": "토큰당 읽는 GB",
    "col_ceiling": "상한 tok/s (시퀀스 1개)",
    "col_per_seq": "서버 시퀀스당 디코드 tok/s",
    "col_share": "상한 대비",
    "sec_ground_truth": "llama.cpp 자체 벤치마크와의 비교",
    "ground_truth_intro": "llama-bench와 llama-batched-bench를 이 스윕과 같은 바이너리, 같은 모델 파일로 실행했습니다. 이들은 모델만 잽니다: HTTP, 샘플링, 스케줄러 없이 합성 프롬프트로 측정합니다.",
    "gt_single_note": "시퀀스 1개, 샘플링 없음",
    "col_gt_benchkit": "benchkit 집계 디코드 tok/s (클라이언트)",
    "col_gt_server_slot": "서버 슬롯당 디코드 tok/s",
    "col_gt_server_agg": "서버 슬롯당 x 슬롯 수",
    "col_gt_batched": "같은 배치의 llama-batched-bench tg tok/s",
    "col_gt_ratio": "서버 / batched-bench",
    "col_gt_config": "설정",
    "gt_batched_shape": "아래 llama-batched-bench 수치: npp {pp}, ntg {tg} 실행(`{file}`), 이 워크로드의 평균 호출(프롬프트 {prompt}, 완료 {completion} 토큰)에 가장 가까운 형태입니다.",
    "ground_truth_why": "차이의 이유: llama-batched-bench는 모든 시퀀스를 다른 작업 없이 한꺼번에 디코드하고 샘플링을 하지 않습니다. 서버는 모든 슬롯의 토큰을 CPU에서 샘플링하고, 다른 슬롯의 프롬프트 조각을 같은 배치에 섞으며, benchkit 클라이언트는 받은 첫 토큰부터 마지막 토큰까지를 잽니다. 비율이 1보다 훨씬 작고 슬롯이 늘수록 더 떨어진다면, 그 슬롯 수에서는 GPU가 아니라 서버가 한계입니다.",
    "sec_results": "전체 결과",
    "data_out": "모든 작업과 반복 회차의 수치는 이 페이지 옆의 `results.csv`에 있습니다(작업마다 한 행, 여러 번 반복한 작업은 회차마다 한 행 더; Python에서는 `benchkit.results.frame(folder)`).",
    "sec_definitions": "지표 정의",
    "sec_caveats": "측정에서 주의할 점",
    "sec_claims": "전제 검증",
    "sec_corrections": "정정",
    "sec_quality": "품질",
    "sec_other_hw": "다른 하드웨어",
    "sec_untested": "시도하지 않았거나 못 한 것",
    "sec_summary": "정리하면",
    "sec_reference": "참고 데이터",
    "col_job": "작업",
    "col_backend": "백엔드",
    "col_slots": "슬롯",
    "col_mtp": "MTP",
    "col_status": "상태",
    "col_reason": "이유",
    "col_point": "계획한 조합",
    "col_config": "설정",
    "col_s_tp": "단위당 초(처리량)",
    "col_s_lat": "단위당 초(슬롯 지연)",
    "col_decode": "decode tok/s(합산)",
    "col_prefill": "prefill tok/s(합산)",
    "col_calls": "호출 성공 / 실패",
    "col_cap": "상한 도달",
    "col_ratio": "가장 빠른 쪽 대비",
    "col_gain": "이전 대비 decode 이득",
    "col_obj_change": "{objective}: 이전 대비 변화",
    "col_uncapped": "상한 도달 호출 제외(추정)",
    "slo_out": "SLO 초과",
    "differs_per_job": "작업마다 다름:",
    "col_ctx": "컨텍스트(토큰)",
    "col_off": "MTP 끔 단위당 초",
    "col_on": "MTP 켬 단위당 초",
    "col_on_off": "켬 / 끔",
    "col_effect": "효과",
    "col_acceptance": "투기 토큰 수용률",
    "col_base": "기준 빌드 단위당 초",
    "col_new": "새 빌드 단위당 초",
    "col_change": "변화",
    "col_prefill_change": "prefill tok/s",
    "col_decode_change": "decode tok/s",
    "col_n": "반복",
    "col_mean": "평균 단위당 초",
    "col_cv": "변동계수",
    "col_ci": "95% 신뢰구간",
    "col_premise": "전제",
    "col_source": "출처",
    "col_expected": "기대 범위",
    "col_measured": "실측",
    "col_verdict": "판정",
    "col_factor": "요인",
    "col_earlier": "이전",
    "col_now": "지금",
    "col_why": "이유",
    "col_date": "게시",
    "derived_mark": "†",
    "derived_legend": "† 표시는 benchkit이 잰 값이 아니라 글에서 옮기거나 유도한 값입니다(참고 데이터 참조).",
    "yes": "켬",
    "no": "끔",
    "not_run": "실행 안 됨",
    "no_figure_data": "그릴 완료 조합이 없습니다.",
    "fig_backend": "백엔드별 슬롯 수에 따른 단위당 초(처리량 기준)",
    "fig_slots": "슬롯 수에 따른 두 기준의 단위당 초와 합산 decode 처리량",
    "fig_mtp": "MTP 켬/끔: 슬롯 수별 단위당 초(처리량 기준)",
    "fig_spec": "투기 켬/끔: 슬롯 수별 단위당 초(처리량 기준)",
    "fig_build": "기준 빌드와 새 빌드: 설정별 단위당 초(처리량 기준)",
    "definitions_intro": "각 지표를 재는 방법:",
    "noise_single": (
        "각 조합을 한 번씩만 돌려 반복 간 노이즈를 모릅니다. {gain}(study.knee_gain)보다 작은 차이는 "
        "승리가 아니라 차이 없음으로 적었습니다."
    ),
    "noise_repeats": (
        "두 번 이상 돌린 조합의 단위당 초(처리량 기준) 평균, 변동계수, 95% 신뢰구간입니다. 노이즈 안의 "
        "차이는 차이 없음으로 적었습니다."
    ),
    "no_caveats": "데이터에서 발견된 것이 없습니다.",
    "no_claims": "연구에 검증할 전제가 없습니다.",
    "claim_supported": "지지됨",
    "claim_refuted": "반박됨",
    "claim_partly": "일부만 지지됨",
    "claim_untestable": "여기서는 검증 불가",
    "claims_intro": "연구에 적어 둔 전제를 완료된 측정값과 대조했습니다:",
    "corrections_none": "이전 게시({date}) 이후 바뀐 판정이 없습니다.",
    "corrections_first": "이 연구의 첫 게시라 정정할 것이 아직 없습니다.",
    "corrections_no_ledger": (
        "이전 게시 기록(원장)이 주어지지 않아(study.ledger를 지정하거나 --publish로 게시하세요) 이전 "
        "판정과 대조하지 못했습니다."
    ),
    "corrections_intro": "이 연구의 이전 게시 이후 바뀐 판정입니다:",
    "confirmed_intro": "이전에 잠정이었고 이제 데이터로 확인된 판정:",
    "refuted_claims_intro": "측정으로 반박된 전제(전제 검증 참조):",
    "claim_expected": "기대",
    "claim_measured": "실측",
    "quality_not_measured": (
        "결과의 품질은 재지 않았습니다. 이 글은 속도만 다룹니다. 빠르다는 것과 답이 믿을 만하다는 것은 "
        "별개의 문제입니다."
    ),
    "quality_measured": "연구 설정상 결과 품질은 별도로 측정했습니다.",
    "other_hw_intro": "다른 하드웨어의 결과는 참고로만 적었고, 위 숫자와 비교하지 않습니다.",
    "untested_missing": "완료된 결과가 없는 계획 조합:",
    "untested_declared": "연구에 적어 둔, 시도하지 않은 것:",
    "untested_none": "계획한 조합이 모두 완료됐고, 연구에 적어 둔 미시도 항목도 없습니다.",
    "reference_intro": "여기 결과의 일부 또는 전부는 benchkit이 잰 것이 아니라 글에서 옮기거나 유도한 참고 데이터입니다({jobs}개 작업):",
    "summary_rec": "권장 설정: {point}.",
    "summary_none": "권장 설정 없음: 데이터가 하나의 설정을 가리키지 않습니다.",
    "summary_projection": "환산: {text}",
    "summary_status_provisional": "이 글은 잠정입니다: {why}.",
    "summary_status_complete": "계획한 조합이 모두 완료됐습니다.",
    "summary_status_evidence": (
        "계획한 조합은 모두 완료됐지만, {factors} 판정은 데이터로 아직 확정되지 않았습니다(각 절 참고)."
    ),
    "noise_declared": (
        "각 조합을 한 번씩 돌렸습니다. 연구가 밝힌 실행 간 노이즈는 {noise}입니다: 그 안의 차이는 방향은 "
        "그대로 두되 판정을 잠정으로 남깁니다. {gain}(무릎 기준)보다 작은 차이는 차이 없음입니다."
    ),
    "noise_per_unit": (
        "각 조합을 한 번씩 돌렸습니다. 두 조합은 둘 다 돌린 단위끼리 비교합니다: 단위별 비율의 흩어짐이 "
        "차이보다 크면 판정은 잠정입니다. {gain}(무릎 기준)보다 작은 차이는 차이 없음입니다."
    ),
    "summary_quality": "속도만 쟀고, 결과 품질은 재지 않았습니다.",
    "missing_points": "빠진 조합: {points}",
    "missing_many": "기대는 계획 조합 {n}개가 완료되지 않았습니다(아래 '시도하지 않았거나 못 한 것' 참조)",
    "summary_rec_provisional": (
        "잠정 권장 설정: {point}. {factors} 판정은 데이터로 아직 확정되지 않았습니다(각 절 참고)."
    ),
    "summary_best_so_far": (
        "아직 권장 설정이 없습니다: 지금까지 완료된 조합 중에서는 {point_subject} 가장 낫지만, 비교할 계획 조합이 "
        "완료되지 않았습니다."
    ),
}


# Korean wording of measure.DEFINITIONS; a metric missing here keeps its English definition.
DEFINITIONS_KO = {
    "prompt_token_mismatches": (
        "서버가 토큰화한 프롬프트 길이가 픽스처에 기록된 길이와 다른 완료 호출 수(usage.prompt_tokens와 "
        "픽스처 비교): 토크나이저가 다르다는 뜻입니다."
    ),
    "wall_s": "클라이언트 벽시계: 첫 요청을 보낸 때부터 마지막 응답을 받은 때까지.",
    "s_per_unit_throughput": (
        "처리량 기준: wall_s / 완료한 단위 수. 모든 슬롯으로 단위를 함께 돌릴 때 단위 하나가 드는 비용."
    ),
    "s_per_unit_slot_latency": (
        "슬롯 지연 기준: 완료한 단위마다 (그 단위의 마지막 응답 - 첫 요청)의 평균. 단위 하나가 기다리는 "
        "시간으로, 처리량 기준의 대략 슬롯 수배."
    ),
    "prefill_tok_s": (
        "합산 prefill 처리량: 서버가 평가한 프롬프트 토큰(timings.prompt_n, 캐시된 토큰 제외) / 요청과 첫 "
        "토큰 사이에 있는 호출이 하나라도 있던 벽시계 시간."
    ),
    "decode_tok_s": (
        "합산 decode 처리량: 생성 토큰 / 첫 토큰과 마지막 토큰 사이에 있는 호출이 하나라도 있던 벽시계 시간."
    ),
    "ttft_ms": "클라이언트가 잰 첫 토큰까지의 시간: 요청을 보내고 첫 토큰을 받기까지, 서버 안 대기 포함.",
    "itl_ms": "호출별 토큰 간격: (마지막 토큰 - 첫 토큰) / (생성 토큰 - 1). 스트림 청크가 아니라 토큰을 셉니다.",
    "server_prompt_tok_s": "서버 자신의 호출별 timings.prompt_per_second 평균.",
    "server_decode_tok_s": "서버 자신의 호출별 timings.predicted_per_second 평균.",
    "draft_acceptance": (
        "수용된 투기 토큰 / 투기 토큰, 서버 timings의 호출 합계(draft_n_accepted / draft_n). 투기가 "
        "없으면 null."
    ),
    "calls_hit_cap": "워크로드의 생성 상한까지 간 호출(finish_reason = length이고 생성 토큰 = 상한): 폭주 출력.",
    "cap_time_share": "상한에 걸린 호출이 차지한 호출 시간 합계의 비율.",
    "error_rate": "실패한 호출 / 시도한 호출.",
}
