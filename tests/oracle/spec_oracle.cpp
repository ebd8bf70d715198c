// spec_oracle: llama.cpp's own speculative decoding, recorded round by round.
//
// This is examples/speculative-simple/speculative-simple.cpp from the llama.cpp tree that
// llama-cpp-python vendors, with two changes:
//   * the target sampler is forced to greedy (temperature 0, nothing else in the chain), and
//   * every verification round is recorded and the recording is printed as JSON on stdout:
//
//     {"prompt_tokens": [...],
//      "rounds": [{"drafted": [...], "n_accepted": k, "ids": [...]}, ...],
//      "n_predict": N, ...}
//
//   drafted     the draft the target verified in that round ([] when no draft was made)
//   n_accepted  how many draft tokens the target accepted (ids.size() - 1)
//   ids         the accepted draft tokens followed by the target's own next token
//   n_predict   tokens generated in total (the example's own counter; the loop stops once it
//               exceeds -n, so it can be -n + a few)
//
// The loop itself (prompt processing with common_speculative_process, common_speculative_begin,
// draft, verify batch, common_speculative_process on the verify batch,
// common_sampler_sample_and_accept_n, common_speculative_accept, KV trimming, checkpoints for
// targets without partial sequence removal) is the example's, unchanged.
//
// Everything else (llama.cpp logs, the example's text output) goes to stderr: stdout is
// re-pointed at stderr on start and only the JSON is written to the original stdout.
//
// Flags are llama.cpp's common flags for LLAMA_EXAMPLE_SPECULATIVE, e.g.
//   spec_oracle -m target.gguf -md draft.gguf --spec-type draft-simple --spec-draft-n-max 4 \
//               -p "..." -n 64 --temp 0 -t 2 -c 512
//   spec_oracle -m target.gguf --spec-type ngram-simple --spec-ngram-simple-size-m 8 -p "..." -n 64

#include "arg.h"
#include "common.h"
#include "sampling.h"
#include "speculative.h"
#include "log.h"
#include "llama.h"

#include <algorithm>
#include <clocale>
#include <cstdio>
#include <cstring>
#include <cinttypes>
#include <string>
#include <vector>
#include <utility>

#include <unistd.h>

struct oracle_round {
    llama_tokens drafted;
    llama_tokens ids;
    bool reused  = false; // the draft is a previous round's accepted tokens (checkpoint restore)
    bool restored = false; // partial acceptance on a checkpointed target: the round was rolled back
};

static std::string json_escape(const std::string & s) {
    std::string out;
    out.reserve(s.size() + 2);
    for (unsigned char c : s) {
        switch (c) {
            case '"':  out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n";  break;
            case '\r': out += "\\r";  break;
            case '\t': out += "\\t";  break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    snprintf(buf, sizeof(buf), "\\u%04x", c);
                    out += buf;
                } else {
                    out += (char) c;
                }
        }
    }
    return out;
}

static std::string json_tokens(const llama_tokens & toks) {
    std::string out = "[";
    for (size_t i = 0; i < toks.size(); ++i) {
        if (i > 0) {
            out += ", ";
        }
        out += std::to_string(toks[i]);
    }
    out += "]";
    return out;
}

int main(int argc, char ** argv) {
    std::setlocale(LC_NUMERIC, "C");

    // keep the real stdout for the JSON; everything else printed to stdout goes to stderr
    fflush(stdout);
    const int json_fd = dup(STDOUT_FILENO);
    if (json_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        perror("spec_oracle: dup");
        return 1;
    }
    FILE * json_out = fdopen(json_fd, "w");
    if (json_out == nullptr) {
        perror("spec_oracle: fdopen");
        return 1;
    }

    common_params params;

    common_init();

    if (!common_params_parse(argc, argv, params, LLAMA_EXAMPLE_SPECULATIVE)) {
        return 1;
    }

    if (params.n_predict < -1) {
        LOG_ERR("%s: --n-predict must be >= -1\n", __func__);
        return 1;
    }

    const auto output_limits = common_speculative_get_output_limits(
            params.n_batch, params.n_parallel, common_speculative_n_max(&params.speculative));
    params.n_outputs_max = output_limits.total;
    params.n_outputs_max_per_seq = output_limits.per_seq;

    // init llama.cpp
    llama_backend_init();
    llama_numa_init(params.numa);

    llama_model * model_tgt = NULL;

    llama_context * ctx_tgt = NULL;

    // load the target model
    auto llama_init_tgt = common_init_from_params(params);

    model_tgt = llama_init_tgt->model();
    ctx_tgt   = llama_init_tgt->context();

    if (model_tgt == nullptr || ctx_tgt == nullptr) {
        LOG_ERR("%s: failed to load the target model\n", __func__);
        return 1;
    }

    const llama_vocab * vocab = llama_model_get_vocab(model_tgt);

    // load the draft model (if any) - this also creates the MTP draft context when MTP speculation is enabled
    common_speculative_init_result_ptr spec_init;

    {
        common_params params_dft = common_base_params_to_speculative(params);

        spec_init = common_speculative_init_from_params(params_dft, model_tgt, ctx_tgt);

        params.speculative.draft.ctx_tgt = ctx_tgt;
        params.speculative.draft.ctx_dft = spec_init->context();
    }

    llama_context * ctx_dft = params.speculative.draft.ctx_dft;

    // check if the context supports partial sequence removal
    const bool use_ckpt_tgt = common_context_can_seq_rm(ctx_tgt) == COMMON_CONTEXT_SEQ_RM_TYPE_FULL;
    const bool use_ckpt_dft = common_context_can_seq_rm(ctx_dft) == COMMON_CONTEXT_SEQ_RM_TYPE_FULL;

    if (use_ckpt_tgt) {
        LOG_INF("speculative decoding will use checkpoints (context does not support partial sequence removal)\n");
    }

    // Tokenize the prompt
    std::vector<llama_token> inp;
    inp = common_tokenize(ctx_tgt, params.prompt, true, true);

    if (inp.empty()) {
        LOG_ERR("%s: empty prompt\n", __func__);
        return 1;
    }

    if (llama_n_ctx(ctx_tgt) < (uint32_t) inp.size()) {
        LOG_ERR("%s: the prompt exceeds the context size (%d tokens, ctx %d)\n", __func__, (int) inp.size(), llama_n_ctx(ctx_tgt));

        return 1;
    }

    if (llama_n_batch(ctx_tgt) < (uint32_t) inp.size()) {
        LOG_ERR("%s: the prompt exceeds the batch size (%d tokens, batch %d)\n", __func__, (int) inp.size(), llama_n_batch(ctx_tgt));

        return 1;
    }

    int n_predict = 0;
    int n_drafted = 0;
    int n_accept  = 0;

    // used to determine end of generation
    bool has_eos = false;

    llama_seq_id seq_id = 0;

    std::vector<oracle_round> rounds;
    std::string text;

    // greedy target sampling, whatever the flags or the model's general.sampling.* metadata
    // (applied by common_init_from_params) say: temperature 0 keeps only the first highest
    // logit, the chain's final dist sampler then has a single candidate
    params.sampling.temp     = 0.0f;
    params.sampling.samplers = { COMMON_SAMPLER_TYPE_TEMPERATURE };

    // target model sampling context
    common_sampler_ptr smpl(common_sampler_init(model_tgt, params.sampling));

    // init the speculator
    const auto & params_spec = params.speculative;

    struct common_speculative * spec = common_speculative_init(params.speculative, 1);

    if (spec == nullptr) {
        LOG_ERR("%s", "failed to initialize speculative decoding\n");
        return 1;
    }

    // eval the prompt on the target and feed it to the speculative implementation(s)
    {
        common_batch batch_prompt(ctx_tgt);
        for (size_t i = 0; i < inp.size() - 1; ++i) {
            batch_prompt.add(inp[i], i, seq_id, false);
        }

        llama_process(ctx_tgt, LLAMA_PROCESS_TYPE_DECODE, batch_prompt.get());

        if (!common_speculative_process(spec, batch_prompt)) {
            LOG_ERR("%s", "failed to process speculative prompt\n");
            return 1;
        }
    }

    // note: keep the last token separate!
    llama_token id_last = inp.back();

    // all tokens currently in the target context
    llama_tokens prompt_tgt(inp.begin(), inp.end() - 1);
    prompt_tgt.reserve(llama_n_ctx(ctx_tgt));

    int n_past = inp.size() - 1;

    common_speculative_begin(spec, seq_id, prompt_tgt);

    common_batch batch_tgt(ctx_tgt);

    llama_tokens draft;

    common_prompt_checkpoint ckpt;

    bool draft_reused = false;

    while (true) {
        if (draft.empty()) {
            draft_reused = false;

            ckpt.update_pos(
                    prompt_tgt.size(),
                    llama_memory_seq_pos_min(llama_get_memory(ctx_tgt), seq_id),
                    llama_memory_seq_pos_max(llama_get_memory(ctx_tgt), seq_id));

            if (use_ckpt_dft) {
                ckpt.update_dft(ctx_dft, seq_id, LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY);
            }

            // determine the max draft that fits the remaining context and generation budget
            int n_draft_max = (int) llama_n_ctx(ctx_tgt) - n_past - 2;
            if (params.n_predict >= 0) {
                n_draft_max = std::min(n_draft_max, params.n_predict - n_predict - 1);
            }
            n_draft_max = std::max(n_draft_max, 0);

            // generate a new draft
            common_speculative_get_draft_params(spec, seq_id) = {
                /* .drafting   = */ true,
                /* .n_max      = */ n_draft_max,
                /* .pos0       = */ n_past,
                /* .id_last    = */ id_last,
                /* .prompt     = */ &prompt_tgt,
                /* .result     = */ &draft, // output
            };
            common_speculative_draft(spec);

            // save a checkpoint of the target context before evaluating the draft
            // this allows us to restore the state if partial draft acceptance occurs
            if (!draft.empty()) {
                if (use_ckpt_tgt) {
                    ckpt.update_tgt(ctx_tgt, seq_id, LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY);
                }
            }

            // reset the draft context to the checkpoint before verification
            if (ctx_dft) {
                if (use_ckpt_dft) {
                    ckpt.load_dft(ctx_dft, seq_id, LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY);
                }

                llama_memory_seq_rm(llama_get_memory(ctx_dft), seq_id, ckpt.pos_max + 1, -1);
            }
        } else {
            // we have a previous (partial) draft to reuse from checkpoint restoration
            if (use_ckpt_tgt) {
                GGML_ASSERT(!ckpt.empty());
            }
            draft_reused = true;
        }

        oracle_round round;
        round.drafted = draft;
        round.reused  = draft_reused;

        // always have a token to evaluate from before - id_last
        batch_tgt.clear();
        batch_tgt.add(id_last, n_past++, seq_id, true);

        // evaluate the target model on [id_last, draft0, draft1, ..., draftN-1]
        {
            for (size_t i = 0; i < draft.size(); ++i) {
                batch_tgt.add(draft[i], n_past + i, seq_id, true);
            }

            llama_process(ctx_tgt, LLAMA_PROCESS_TYPE_DECODE, batch_tgt.get());
        }

        // feed the batch to the speculative implementation(s) - this drives the draft model, MTP, Eagle3, etc.
        if (!common_speculative_process(spec, batch_tgt)) {
            LOG_ERR("%s", "failed to process speculative batch\n");
            break;
        }

        // only save the sampler sampler state if we use checkpoints
        common_sampler_ptr smpl_save;
        if (use_ckpt_tgt) {
            smpl_save.reset(common_sampler_clone(smpl.get()));
        }

        // save the size of the draft being verified
        const size_t n_draft = draft.size();

        auto ids = common_sampler_sample_and_accept_n(smpl.get(), ctx_tgt, draft);

        GGML_ASSERT(ids.size() > 0); // there will always be at least one accepted token

        round.ids = ids;

        // check for partial draft acceptance:
        // if the context doesn't support partial sequence removal, restore the checkpoint
        // and make the accepted tokens the new partial draft for the next iteration
        if (use_ckpt_tgt && ids.size() - 1 < n_draft) {
            LOG_DBG("partial acceptance: %zu < %zu, restoring checkpoint\n", ids.size() - 1, n_draft);

            round.restored = true;
            rounds.push_back(std::move(round));

            draft = std::move(ids);

            {
                ckpt.load_tgt(ctx_tgt, seq_id, LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY);

                llama_memory_seq_rm(llama_get_memory(ctx_tgt), seq_id, ckpt.pos_max + 1, -1);
            }

            if (ctx_dft) {
                ckpt.load_dft(ctx_dft, seq_id, LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY);

                llama_memory_seq_rm(llama_get_memory(ctx_dft), seq_id, ckpt.pos_max + 1, -1);
            }

            prompt_tgt.resize(ckpt.n_tokens);
            smpl = std::move(smpl_save);

            n_past = (int) prompt_tgt.size();

            continue;
        }

        rounds.push_back(std::move(round));

        common_speculative_accept(spec, seq_id, ids.size() - 1);

        // full acceptance: consume the draft and commit accepted tokens
        n_past    += ids.size() - 1;
        n_drafted += n_draft; // note: we ignore the discarded small drafts
        n_accept  += ids.size() - 1;
        n_predict += ids.size();

        for (size_t i = 0; i < ids.size(); ++i) {
            prompt_tgt.push_back(id_last);

            id_last = ids[i];

            if (llama_vocab_is_eog(vocab, id_last)) {
                has_eos = true;
                break;
            }

            text += common_token_to_piece(ctx_tgt, id_last);
        }

        LOG_DBG("accepted %d/%d draft tokens, the last target token is: (%d)\n", (int) ids.size() - 1, (int) draft.size(), id_last);

        // clear the draft since it has been consumed
        draft.clear();

        {
            LOG_DBG("clear kv cache from any extra tokens, n_past = %d\n", n_past);

            llama_memory_seq_rm(llama_get_memory(ctx_tgt), seq_id, n_past, -1);

            if (ctx_dft) {
                llama_memory_seq_rm(llama_get_memory(ctx_dft), seq_id, n_past, -1);
            }
        }

        if ((params.n_predict >= 0 && n_predict > params.n_predict) || has_eos) {
            break;
        }
    }

    LOG_INF("\n%s\n\n", text.c_str());
    LOG_INF("n_draft   = %d\n", params_spec.draft.n_max);
    LOG_INF("n_predict = %d\n", n_predict);
    LOG_INF("n_drafted = %d\n", n_drafted);
    LOG_INF("n_accept  = %d\n", n_accept);
    LOG_INF("rounds    = %zu\n", rounds.size());

    LOG_INF("\n");
    LOG_INF("draft:\n\n");
    common_speculative_print_stats(spec);

    // the JSON recording
    {
        std::string out = "{\n";
        out += "  \"prompt_tokens\": " + json_tokens(inp) + ",\n";
        out += "  \"rounds\": [";
        for (size_t r = 0; r < rounds.size(); ++r) {
            const auto & rd = rounds[r];
            out += r == 0 ? "\n" : ",\n";
            out += "    {\"drafted\": " + json_tokens(rd.drafted);
            out += ", \"n_accepted\": " + std::to_string((int) rd.ids.size() - 1);
            out += ", \"ids\": " + json_tokens(rd.ids);
            if (rd.reused) {
                out += ", \"reused\": true";
            }
            if (rd.restored) {
                out += ", \"restored\": true";
            }
            out += "}";
        }
        out += rounds.empty() ? "],\n" : "\n  ],\n";
        out += "  \"n_predict\": " + std::to_string(n_predict) + ",\n";
        out += "  \"n_drafted\": " + std::to_string(n_drafted) + ",\n";
        out += "  \"n_accept\": " + std::to_string(n_accept) + ",\n";
        out += "  \"has_eos\": " + std::string(has_eos ? "true" : "false") + ",\n";
        out += "  \"spec_types\": \"" + json_escape(common_speculative_type_name_str(params_spec.types)) + "\",\n";
        out += "  \"spec_n_max\": " + std::to_string(common_speculative_n_max(spec)) + ",\n";
        out += "  \"use_ckpt_tgt\": " + std::string(use_ckpt_tgt ? "true" : "false") + ",\n";
        out += "  \"text\": \"" + json_escape(text) + "\"\n";
        out += "}\n";

        fputs(out.c_str(), json_out);
        fflush(json_out);
    }

    common_speculative_free(spec);

    llama_backend_free();

    fclose(json_out);

    return 0;
}
