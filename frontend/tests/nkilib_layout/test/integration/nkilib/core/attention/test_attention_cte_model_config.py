attention_cte_model_configs = []
