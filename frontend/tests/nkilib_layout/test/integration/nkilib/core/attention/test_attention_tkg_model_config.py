attention_tkg_model_configs = []
